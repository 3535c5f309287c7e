/**
 * Tenant resolution, exactly as DECISIONS.md "Roles, permissions, tenants" states it:
 * header `X-Service-Tenant`; not a UUID, or the system tenant → 400. A token bound to one tenant:
 * the header must match (else 403) or is implied. No header and exactly one tenant → that one;
 * otherwise 400 "tenant required".
 */
import { ApiError, errors } from '../contract/errors.js';
import { SYSTEM_TENANT } from '../ledger/record.js';
import type { Principal } from './principal.js';

export const TENANT_HEADER = 'x-service-tenant';
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** The header's tenant id (lower-cased), undefined when absent; 400 when malformed or the system tenant. */
export function tenantHeader(headers: Readonly<Record<string, string>>): string | undefined {
  const raw = headers[TENANT_HEADER];
  if (raw === undefined) return undefined;
  const id = raw.trim().toLowerCase();
  if (!UUID.test(id)) throw errors.badRequest('X-Service-Tenant must be a UUID');
  if (id === SYSTEM_TENANT) throw errors.badRequest('X-Service-Tenant may not name the system tenant');
  return id;
}

/** The tenant a request acts in; `required: false` answers undefined instead of 400 when none is implied. */
export function resolveTenant(principal: Principal, header: string | undefined, required: boolean): string | undefined {
  if (principal.boundTenant !== null) {
    if (header !== undefined && header !== principal.boundTenant)
      throw new ApiError('forbidden', 'this API key is bound to another tenant');
    return principal.boundTenant;
  }
  if (header !== undefined) return header;
  if (principal.grants.length === 1) return (principal.grants[0] as { tenant: string }).tenant;
  if (!required) return undefined;
  throw errors.badRequest('tenant required: set X-Service-Tenant (the caller can act in more than one tenant, or none)');
}
