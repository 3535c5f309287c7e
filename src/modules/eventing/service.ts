/** What the eventing routes share: the runtime, the caller's role, authoring-time checks. */
import { ApiError, errors } from '../../contract/errors.js';
import { grantIn } from '../../auth/principal.js';
import { roleAtLeast, type Role } from '../../auth/roles.js';
import type { RequestContext } from '../../http/context.js';
import { FormatTokenError, parseFormatToken } from '../../encoders/registry.js';
import { checkEndpoint, insecureEndpointsAllowed } from './endpoint.js';
import { isDurable, type EventTypeDecl } from '../../events/event-types.js';
import type { EventingRuntime } from './runtime.js';
import type { ReceiverAuth, SubscriptionInput } from './subscription-store.js';

type Ctx = Pick<RequestContext, 'principal' | 'tenant' | 'services'>;

export function runtimeOf(ctx: Pick<RequestContext, 'services'>): EventingRuntime {
  const rt = ctx.services.eventing;
  if (!rt) throw new ApiError('not_configured', 'eventing is not running in this server');
  return rt;
}

/** The caller's role in the request tenant (a superadmin without a membership acts as owner). */
export function callerRole(ctx: Ctx): Role {
  const p = ctx.principal;
  const g = p && ctx.tenant ? grantIn(p, ctx.tenant) : undefined;
  if (g) return g.role;
  if (p?.superadmin) return 'owner';
  throw errors.forbidden();
}

export interface AuthoringBody {
  name: string;
  enabled?: boolean;
  event_types: string[];
  endpoint: string;
  ca_pem?: string | null;
  pin_sha256?: string | null;
  sink_format?: string;
  auth?: ReceiverAuth | null;
  retry?: { max_attempts?: number; initial_interval_s?: number };
  timeout_ms?: number;
  role?: Role;
}

/** Checks a create or update body: endpoint, format token, declared event types, role ceiling. */
export function authoringInput(ctx: Ctx, rt: EventingRuntime, body: AuthoringBody): SubscriptionInput {
  const endpoint = checkEndpoint(body.endpoint, insecureEndpointsAllowed());
  let sink_format: string;
  try {
    sink_format = parseFormatToken('eventing_sink', body.sink_format);
  } catch (err) {
    if (err instanceof FormatTokenError)
      throw errors.badRequest(`sink_format ${JSON.stringify(body.sink_format)} is ` + `not accepted; accepted: ${err.accepted.join(', ')}`);
    throw err;
  }
  const unknown = body.event_types.filter((t) => !rt.catalog.get(t));
  if (unknown.length > 0)
    throw errors.badRequest(`unknown event type(s): ${unknown.join(', ')} ` + `(GET /v1/m/eventing/event-types lists them)`);
  // Deliveries are made from the event log only: a type that never reaches it would never be delivered.
  const inProcess = body.event_types.filter((t) => !isDurable(rt.catalog.get(t) as EventTypeDecl));
  if (inProcess.length > 0) {
    const why = 'are not written to the event log and cannot be subscribed to (durable: false in GET /v1/m/eventing/event-types)';
    throw errors.badRequest(`event type(s) ${inProcess.join(', ')} ${why}`);
  }
  const mine = callerRole(ctx);
  const role = body.role ?? mine;
  if (!roleAtLeast(mine, role)) throw new ApiError('role_ceiling', `a subscription's role cannot be above yours (${mine})`);
  if (body.ca_pem && !/-----BEGIN CERTIFICATE-----/.test(body.ca_pem)) throw errors.badRequest('ca_pem must hold PEM certificates');
  const input: SubscriptionInput = {
    name: body.name,
    event_types: body.event_types,
    endpoint,
    sink_format,
    role,
    ca_pem: body.ca_pem ?? null,
    pin_sha256: body.pin_sha256 ?? null,
  };
  if (body.enabled !== undefined) input.enabled = body.enabled;
  if (body.auth !== undefined) input.auth = body.auth;
  if (body.retry !== undefined) input.retry = body.retry;
  if (body.timeout_ms !== undefined) input.timeout_ms = body.timeout_ms;
  return input;
}
