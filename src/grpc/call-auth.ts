/**
 * Authentication of a streaming gRPC call through identity's own authenticator: a thin adapter
 * builds the `RequestContext` and route declaration the authenticator reads (bearer token from
 * `authorization` metadata, tenant from `x-service-tenant` metadata or the token binding, the
 * route's permission) and calls it, so the rules live only in src/auth (brief: no second
 * implementation). Streams then re-check the credential per batch with identity's resolver.
 */
import { randomUUID } from 'node:crypto';
import type { Metadata } from '@grpc/grpc-js';
import { ApiError } from '../contract/errors.js';
import type { CompiledRoute } from '../contract/registry.js';
import type { RouteSpec } from '../contract/route.js';
import type { Authenticator } from '../http/app.js';
import type { RequestContext } from '../http/context.js';
import type { Services } from '../serve/services.js';
import type { Principal } from '../auth/principal.js';
import { bearerToken, resolveCredential } from '../auth/credentials.js';
import { identityOf } from '../auth/runtime.js';

/** What an authenticated call acts as. */
export interface CallIdentity {
  principal: Principal;
  tenant: string;
  /** the presented bearer token, kept to re-check it while the stream lives */
  token: string;
  requestId: string;
}

/** The declaration of a gRPC method as the authenticator sees it (never routed over HTTP). */
export function grpcRoute(fullMethod: string, permission: string): CompiledRoute {
  const spec: RouteSpec = {
    method: 'POST',
    path: fullMethod,
    stability: 'stable',
    operationId: `grpc${fullMethod.replace(/[^A-Za-z0-9]/g, '')}`,
    summary: fullMethod,
    permission,
    handler: () => undefined,
  };
  return { spec, auditActions: [] };
}

/** Run the authenticator for a call; throws the same ApiErrors REST would answer with. */
export async function authenticateCall(
  services: Services,
  authenticate: Authenticator,
  route: CompiledRoute,
  md: Metadata,
  remoteAddress: string,
): Promise<CallIdentity> {
  const headers: Record<string, string> = {};
  for (const name of ['authorization', 'x-service-tenant']) {
    const v = md.get(name)[0];
    if (typeof v === 'string') headers[name] = v;
  }
  const requestId = randomUUID();
  const ctx = {
    method: 'POST',
    path: route.spec.path,
    route: route.spec.path,
    params: {},
    query: {},
    body: undefined,
    headers,
    requestId,
    remoteAddress,
    signal: new AbortController().signal,
    log: services.log,
    services,
    responseHeaders: {},
  } as RequestContext;
  await authenticate(ctx, route);
  const { principal, tenant } = ctx;
  if (!principal || !tenant)
    throw new ApiError('bad_request', 'tenant required: set x-service-tenant metadata or use a tenant-bound token');
  return { principal, tenant, token: bearerToken(headers['authorization']) as string, requestId };
}

/** True while the call's credential still resolves (not expired, revoked or disabled) and still reaches its tenant. */
export async function credentialStillValid(services: Services, id: CallIdentity): Promise<boolean> {
  const p = await resolveCredential(identityOf(services), id.token);
  if (!p) return false;
  return p.grants.some((g) => g.tenant === id.tenant) || (p.superadmin && p.boundTenant === null);
}
