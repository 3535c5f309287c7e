/**
 * A request context for the governance services over a real store: the principal of a person with
 * a session or an API key, a recording audit sink (to assert every step's ledger record) and the
 * real event bus (to assert the events).
 */
import { randomUUID } from 'node:crypto';
import { EventBus } from '../../../src/events/bus.js';
import { EventCatalog, type BusEvent } from '../../../src/events/event-types.js';
import { RecordingAuditSink } from '../../../src/ledger/audit-sink.js';
import type { Principal } from '../../../src/auth/principal.js';
import type { Store } from '../../../src/store/store.js';
import type { Services } from '../../../src/serve/services.js';
import { governanceEvents } from '../../../src/modules/governance/events.js';
import { compileRoutes } from '../../../src/contract/registry.js';
import type { RequestContext } from '../../../src/http/context.js';
import { appendAudit } from '../../../src/http/request-scope.js';

/** The governance services record through `ctx.audit`: here, of a route declaring every action they take. */
const [declared] = compileRoutes([
  {
    method: 'POST',
    path: '/test/governance',
    stability: 'stable',
    operationId: 'testGovernance',
    summary: 'the governance services under test',
    permission: 'governance:approval:write',
    audit: ['approval.request', 'approval.decide', 'approval.resolve', 'approval.cancel', 'approval.consume', 'pep.decision'],
    handler: () => undefined,
  },
]);

/** What the governance services read of a request. */
export type GovCtx = Pick<RequestContext, 'tenant' | 'services' | 'requestId' | 'headers' | 'audit'> & { principal: Principal };

export interface GovHarness {
  audit: RecordingAuditSink;
  events: BusEvent[];
  services: Services;
  /** a context acting as `userId` through a session (`user`) or one of their API keys (`token`) */
  as(userId: string, kind?: 'user' | 'token', tokenId?: string): GovCtx;
}

export function govHarness(store: Store, tenant: string, dataDir = '/nonexistent'): GovHarness {
  const audit = new RecordingAuditSink();
  const bus = new EventBus({ catalog: new EventCatalog(governanceEvents) });
  const events: BusEvent[] = [];
  bus.subscribe({ name: 'test', types: '*' }, (e) => {
    events.push(e);
  });
  const services = { store, audit, events: bus, dataDir } as unknown as Services;
  return {
    audit,
    events,
    services,
    as(userId, kind = 'user', tokenId = randomUUID()) {
      const credentialId = kind === 'user' ? randomUUID() : tokenId;
      const principal: Principal = {
        kind,
        userId,
        actor: kind === 'user' ? `user:${userId}` : `token:${credentialId}`,
        actorKind: kind,
        credentialId,
        superadmin: false,
        aal: 1,
        aalExpiresAt: null,
        amr: [],
        boundTenant: null,
        roleCeiling: null,
        grants: [{ tenant, role: 'editor' }],
        expiresAt: null,
      };
      const ctx: GovCtx = {
        principal,
        tenant,
        services,
        requestId: randomUUID(),
        headers: {},
        audit: (target, meta, opts) => appendAudit(ctx, declared as NonNullable<typeof declared>, target, meta, opts),
      };
      return ctx;
    },
  };
}

/** Lets the bus' subscriber loops run. */
export const drain = (): Promise<void> => new Promise((r) => setTimeout(r, 20));
