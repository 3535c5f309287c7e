/**
 * Governed workspaces (spec "Governed workspace"): root path, display name, mount mode (`rw`
 * default, `ro`), DLP posture on reads (`label` default, `deny`, `off`), per-read size cap (0
 * means the default 5 MiB), restricted subpaths, container mount target (default `/workspace`).
 * PATCH merges like agents: absent fields stay, `restricted_subpaths` is replaced whole.
 */
import { posix } from 'node:path';
import { errors } from '../../contract/errors.js';
import { nowTimestamp } from '../../ledger/time.js';
import { newId } from '../../store/ids.js';
import type { Transaction } from 'kysely';
import type { Database } from '../../store/schema.js';
import type { Store } from '../../store/store-types.js';
import { decodeCursor, pageOf } from '../../contract/cursor.js';
import { assertTenantWritable } from '../../http/request-scope.js';
import type { WorkspacesTable } from '../../store/schema-accessmap.js';

/** Spec "Limits": a per-read cap of 0 means 5 MiB. */
export const DEFAULT_READ_CAP_BYTES = 5 * 1024 * 1024;

export interface Workspace {
  id: string;
  tenant_id: string;
  display_name: string;
  root_path: string;
  mount_mode: 'rw' | 'ro';
  dlp_posture: 'label' | 'deny' | 'off';
  read_cap_bytes: number;
  /** the cap a read is held to: `read_cap_bytes`, or 5 MiB when that is 0 */
  effective_read_cap_bytes: number;
  restricted_subpaths: string[];
  mount_target: string;
  version: number;
  created_at: string;
  updated_at: string;
}

export interface WorkspaceInput {
  root_path: string;
  display_name?: string;
  mount_mode?: 'rw' | 'ro';
  dlp_posture?: 'label' | 'deny' | 'off';
  read_cap_bytes?: number;
  restricted_subpaths?: string[];
  mount_target?: string;
}

export type WorkspacePatch = Partial<WorkspaceInput> & { version: number };

/** A stored workspace row: the schema's own table type, not a second copy of it. */
type Row = WorkspacesTable;

const COLUMNS = [
  'id',
  'tenant_id',
  'display_name',
  'root_path',
  'mount_mode',
  'dlp_posture',
  'read_cap_bytes',
  'restricted_subpaths',
  'mount_target',
  'version',
  'created_at',
  'updated_at',
] as const;

function toWorkspace(r: Row): Workspace {
  const cap = Number(r.read_cap_bytes);
  return {
    ...r,
    mount_mode: r.mount_mode as Workspace['mount_mode'],
    dlp_posture: r.dlp_posture as Workspace['dlp_posture'],
    read_cap_bytes: cap,
    effective_read_cap_bytes: cap === 0 ? DEFAULT_READ_CAP_BYTES : cap,
    restricted_subpaths: JSON.parse(r.restricted_subpaths) as string[],
    version: Number(r.version),
  };
}

/** An absolute, normalised path: no `.`/`..` segments, no doubled or trailing slash. */
function absolutePath(value: string, field: string): string {
  if (!value.startsWith('/') || value.includes('\0') || posix.normalize(value) !== value || (value.length > 1 && value.endsWith('/'))) {
    throw errors.badRequest(`${field} must be an absolute normalised path (no ., .. or trailing /)`);
  }
  return value;
}

/** Relative subpaths inside the root: a `..` would point outside what the restriction governs. */
function subpaths(values: string[]): string[] {
  for (const v of values) {
    if (v === '' || v.startsWith('/') || v.includes('\0') || v.split('/').some((s) => s === '..' || s === '.' || s === '')) {
      throw errors.badRequest(`restricted subpath ${JSON.stringify(v)} must be relative to the root, without . or .. segments`);
    }
  }
  return [...new Set(values)];
}

/** Runs inside a workspace change's transaction once its row is written (the durable event log). */
export type WorkspaceInTx = (tx: Transaction<Database>, ws: Workspace, changed: string[]) => Promise<void> | void;

/** Creates a workspace with the spec's defaults. */
export async function createWorkspace(store: Store, tenant: string, input: WorkspaceInput, inTx?: WorkspaceInTx): Promise<Workspace> {
  const now = nowTimestamp();
  const root = absolutePath(input.root_path, 'root_path');
  const row: Row = {
    id: newId(),
    tenant_id: tenant,
    root_path: root,
    display_name: input.display_name ?? (posix.basename(root) || root),
    mount_mode: input.mount_mode ?? 'rw',
    dlp_posture: input.dlp_posture ?? 'label',
    read_cap_bytes: input.read_cap_bytes ?? 0,
    restricted_subpaths: JSON.stringify(subpaths(input.restricted_subpaths ?? [])),
    mount_target: absolutePath(input.mount_target ?? '/workspace', 'mount_target'),
    version: 1,
    created_at: now,
    updated_at: now,
  };
  const ws = toWorkspace(row);
  await store.withTenant(tenant, async (tx) => {
    await assertTenantWritable(tx, tenant);
    await tx.insertInto('workspaces').values(row).execute();
    await inTx?.(tx, ws, []);
  });
  return ws;
}

/** One workspace or 404. */
export async function getWorkspace(store: Store, tenant: string, id: string): Promise<Workspace> {
  const row = await store.withTenant(tenant, (tx) =>
    tx.selectFrom('workspaces').select(COLUMNS).where('tenant_id', '=', tenant).where('id', '=', id).executeTakeFirst(),
  );
  if (!row) throw errors.notFound('workspace');
  return toWorkspace(row);
}

/** A keyset page of workspaces. */
export async function listWorkspaces(
  store: Store,
  tenant: string,
  f: { limit: number; cursor?: string },
): Promise<{ items: Workspace[]; has_more: boolean; cursor?: string }> {
  const after = f.cursor ? decodeCursor(f.cursor) : undefined;
  const rows = await store.withTenant(tenant, (tx) => {
    let q = tx.selectFrom('workspaces').select(COLUMNS).where('tenant_id', '=', tenant);
    if (after) q = q.where('id', '>', after);
    return q
      .orderBy('id')
      .limit(f.limit + 1)
      .execute();
  });
  return pageOf(rows.map(toWorkspace), f.limit);
}

/** Merge-patches a workspace when `version` is current; 404 if absent, 409 if stale. */
export async function patchWorkspace(
  store: Store,
  tenant: string,
  id: string,
  patch: WorkspacePatch,
  inTx?: WorkspaceInTx,
): Promise<{ workspace: Workspace; changed: string[] }> {
  return store.withTenant(tenant, async (tx) => {
    await assertTenantWritable(tx, tenant);
    const cur = await tx.selectFrom('workspaces').select(COLUMNS).where('tenant_id', '=', tenant).where('id', '=', id).executeTakeFirst();
    if (!cur) throw errors.notFound('workspace');
    if (Number(cur.version) !== patch.version) throw errors.conflict(`version mismatch: the workspace is at version ${cur.version}`);
    const next: Row = {
      ...cur,
      root_path: patch.root_path !== undefined ? absolutePath(patch.root_path, 'root_path') : cur.root_path,
      display_name: patch.display_name ?? cur.display_name,
      mount_mode: patch.mount_mode ?? cur.mount_mode,
      dlp_posture: patch.dlp_posture ?? cur.dlp_posture,
      read_cap_bytes: patch.read_cap_bytes ?? Number(cur.read_cap_bytes),
      restricted_subpaths:
        patch.restricted_subpaths !== undefined ? JSON.stringify(subpaths(patch.restricted_subpaths)) : cur.restricted_subpaths,
      mount_target: patch.mount_target !== undefined ? absolutePath(patch.mount_target, 'mount_target') : cur.mount_target,
      version: Number(cur.version) + 1,
      updated_at: nowTimestamp(),
    };
    const keys = [
      'root_path',
      'display_name',
      'mount_mode',
      'dlp_posture',
      'read_cap_bytes',
      'restricted_subpaths',
      'mount_target',
    ] as const;
    const changed = keys.filter((k) => String(next[k]) !== String(cur[k]));
    const { id: _id, tenant_id: _t, created_at: _c, ...set } = next;
    const res = await tx
      .updateTable('workspaces')
      .set(set)
      .where('tenant_id', '=', tenant)
      .where('id', '=', id)
      .where('version', '=', patch.version)
      .executeTakeFirst();
    if (Number(res.numUpdatedRows) !== 1) throw errors.conflict('version mismatch: the workspace changed concurrently');
    const workspace = toWorkspace(next);
    await inTx?.(tx, workspace, changed);
    return { workspace, changed };
  });
}
