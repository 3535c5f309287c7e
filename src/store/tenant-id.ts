import { StoreError } from './store-error.js';

// Canonical lowercase 8-4-4-4-12 form (RFC 9562 §4); DECISIONS.md fixes ids as lowercase UUIDs.
// Both backends store this exact text (SQLite CHECK, Postgres uuid output), so accepting uppercase
// here would let a SQLite equality filter silently miss rows that Postgres would match.
const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** True when `value` is a lowercase canonical UUID. */
export function isTenantId(value: unknown): value is string {
  return typeof value === 'string' && UUID_RE.test(value);
}

/** Throws `invalid_tenant_id` unless `value` is a lowercase canonical UUID; validated before any binding. */
export function assertTenantId(value: unknown): asserts value is string {
  if (!isTenantId(value)) {
    throw new StoreError('invalid_tenant_id', 'tenant id must be a lowercase canonical UUID');
  }
}
