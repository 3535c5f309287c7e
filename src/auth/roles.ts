/**
 * Roles and the permission catalog (DECISIONS.md "Roles, permissions, tenants"). Roles per tenant
 * are ordered viewer < editor < admin < owner; superadmin is a user flag and the only holder of
 * `system:admin`. A route's permission `<resource>:<verb>` (or `<ns>:<resource>:<verb>`) maps to
 * the least role that holds it; anything the rules below do not grant is denied.
 */

export const ROLES = ['viewer', 'editor', 'admin', 'owner'] as const;
export type Role = (typeof ROLES)[number];

/** Where a permission is exercised: in one tenant, on the caller's own credentials, or system-wide. */
export type PermissionScope = 'tenant' | 'principal' | 'system';

/** The superadmin-only permission. */
export const SYSTEM_ADMIN = 'system:admin';

// "admin: + users, memberships, tokens, tenant admin, ingest": every verb on these needs admin.
// Tokens are the exception handled by scope: any member may hold API keys of their own, up to
// their role (role ceiling); managing someone else's tokens needs admin (see src/core/tokens).
const ADMIN_RESOURCES = new Set(['user', 'membership', 'tenant', 'ingest']);

/** True when `role` is at least `min`. */
export function roleAtLeast(role: Role, min: Role): boolean {
  return ROLES.indexOf(role) >= ROLES.indexOf(min);
}

/** The lower of two roles (a token's ceiling against its owner's membership). */
export function minRole(a: Role, b: Role): Role {
  return ROLES.indexOf(a) <= ROLES.indexOf(b) ? a : b;
}

/** True for one of the four role names. */
export function isRole(value: unknown): value is Role {
  return typeof value === 'string' && (ROLES as readonly string[]).includes(value);
}

/** How a permission is checked: its scope and, for tenant permissions, the least role holding it. */
export interface PermissionRule {
  permission: string;
  scope: PermissionScope;
  /** least tenant role; absent for system (superadmin only) and principal (any authenticated caller) */
  minRole?: Role;
  resource: string;
  verb: string;
}

/** The rule for one permission; `privileged` reads need editor (never viewer). */
export function permissionRule(permission: string, privileged = false): PermissionRule {
  const parts = permission.split(':');
  const verb = parts[parts.length - 1] as string;
  const resource = parts.slice(0, -1).join(':');
  if (permission === SYSTEM_ADMIN) return { permission, scope: 'system', resource, verb };
  // `self:*` acts only on the caller's own session (whoami, logout, refresh); `token:*` on the
  // caller's own keys, optionally within a tenant named by the header or the body.
  if (resource === 'self') return { permission, scope: 'principal', resource, verb };
  if (resource === 'token') return { permission, scope: 'principal', resource, verb, minRole: 'viewer' };
  let min: Role;
  if (parts.length === 2 && ADMIN_RESOURCES.has(resource)) min = 'admin';
  else if (verb === 'read') min = privileged ? 'editor' : 'viewer';
  else if (verb === 'write') min = 'editor';
  // `admin` and any verb we do not know need admin: deny-by-default leans up, never down.
  else min = 'admin';
  return { permission, scope: 'tenant', resource, verb, minRole: min };
}

/** The tenant permissions `role` holds among `catalog` (whoami grants). */
export function permissionsOf(role: Role, catalog: readonly PermissionRule[]): string[] {
  return catalog.filter((r) => r.scope !== 'system' && (r.minRole === undefined || roleAtLeast(role, r.minRole))).map((r) => r.permission);
}

/** The permission catalog derived from a route table: one rule per distinct permission, sorted. */
export function permissionCatalog(routes: readonly { permission: string; privileged?: boolean }[]): PermissionRule[] {
  const byPermission = new Map<string, PermissionRule>();
  for (const r of routes) {
    if (r.permission === 'public') continue;
    const rule = permissionRule(r.permission, r.privileged);
    const seen = byPermission.get(r.permission);
    // A permission used by a privileged route and a plain one takes the stricter rule.
    if (!seen || (rule.minRole && seen.minRole && !roleAtLeast(seen.minRole, rule.minRole))) byPermission.set(r.permission, rule);
  }
  return [...byPermission.values()].sort((a, b) => a.permission.localeCompare(b.permission));
}
