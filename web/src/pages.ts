/**
 * The console's pages: one line each (docs/web.md "Adding a page"). `section` is the first URL
 * segment; the server serves the SPA for `/<section>` and `/<section>/<anything>` only when the
 * segment is also in CONSOLE_SECTIONS (src/core/web-console/routes.ts). `needs` hides the page
 * from the navigation of users without that permission (the API refuses them anyway).
 */
import type { FunctionComponent } from 'preact';
import type { Location } from './router';
import { OverviewPage } from './pages/overview';
import { AccessMapPage } from './pages/access-map';
import { AgentsPage } from './pages/agents';
import { WorkspacesPage } from './pages/workspaces';
import { AuditPage } from './pages/audit';
import { AdminPage } from './pages/admin';

export interface PageProps {
  loc: Location;
  /** the URL segments after the section (`/agents/<id>` → [id]) */
  rest: string[];
}

export interface PageDef {
  section: string;
  title: string;
  needs?: string;
  component: FunctionComponent<PageProps>;
}

export const PAGES: PageDef[] = [
  { section: 'overview', title: 'Overview', component: OverviewPage },
  { section: 'access-map', title: 'Access map', needs: 'accessmap:graph:read', component: AccessMapPage },
  { section: 'agents', title: 'Agents', needs: 'agent:read', component: AgentsPage },
  { section: 'workspaces', title: 'Workspaces', needs: 'workspace:read', component: WorkspacesPage },
  { section: 'audit', title: 'Audit log', needs: 'audit:read', component: AuditPage },
  { section: 'admin', title: 'Administration', needs: 'self:read', component: AdminPage },
];
