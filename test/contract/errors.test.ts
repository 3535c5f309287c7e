import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { ERROR_CATALOG, ApiError, errorCodes } from '../../src/contract/errors.js';
import { REPO_ROOT } from '../helpers/server.js';

function documented(): Map<string, number> {
  const text = readFileSync(path.join(REPO_ROOT, 'docs', 'errors.md'), 'utf8');
  const rows = new Map<string, number>();
  for (const m of text.matchAll(/^\| `([a-z_]+)` \| (\d{3}) \|/gm)) rows.set(m[1] as string, Number(m[2]));
  return rows;
}

test('errors: every catalog code is documented with its status, and the docs list no code the catalog lacks', () => {
  const docs = documented();
  for (const code of errorCodes()) assert.equal(docs.get(code), ERROR_CATALOG[code].status, `docs/errors.md row for ${code}`);
  for (const code of docs.keys()) assert.ok(code in ERROR_CATALOG, `docs/errors.md lists ${code}, which the catalog lacks`);
});

test('errors: the DECISIONS.md codes keep their statuses (never renamed)', () => {
  const decided: Record<string, number> = {
    bad_request: 400,
    weak_password: 400,
    unauthenticated: 401,
    forbidden: 403,
    role_ceiling: 403,
    step_up_required: 403,
    workspace_confined: 403,
    not_found: 404,
    conflict: 409,
    setup_required: 409,
    setup_complete: 409,
    last_superadmin: 409,
    request_body_too_large: 413,
    tenant_suspended: 423,
    rate_limited: 429,
    locked_out: 429,
    internal: 500,
    not_configured: 501,
    unavailable: 503,
    audit_spool_full: 503,
  };
  for (const [code, status] of Object.entries(decided))
    assert.equal((ERROR_CATALOG as Record<string, { status: number }>)[code]?.status, status, code);
});

test('errors: a 500 envelope never carries the detail', () => {
  assert.deepEqual(new ApiError('internal', 'db password=hunter2 failed').toEnvelope(), {
    error: { code: 'internal', message: 'internal error' },
  });
  assert.deepEqual(new ApiError('not_found', 'agent not found').toEnvelope(), { error: { code: 'not_found', message: 'agent not found' } });
});
