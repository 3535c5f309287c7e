/** What every page knows: the signed-in user, the tenant in use, and what the user may do there. */
import { createContext } from 'preact';
import { useContext } from 'preact/hooks';
import type { Me, ServerInfo } from './api';

export interface TenantChoice {
  id: string;
  name: string;
  role: string;
}

export interface AppState {
  me: Me;
  info: ServerInfo;
  tenant: string | undefined;
  tenants: TenantChoice[];
  /** true when the user holds `permission` in the current tenant (system:admin: superadmins) */
  can: (permission: string) => boolean;
  /** re-read whoami (after a step-up or a change of one's own grants) */
  refreshMe: () => Promise<void>;
}

export const AppContext = createContext<AppState | null>(null);

export function useApp(): AppState {
  const s = useContext(AppContext);
  if (!s) throw new Error('no app state');
  return s;
}
