/**
 * The collector source roster (`console_sources`, migration 26): the sources collectors run (name,
 * kind, tenant, enabled, poll interval, the kind's config), with what collectors last reported (last
 * seen, counts). Kinds and their config are the collector's (src/collector/config.ts: `jsonl`, `dir`,
 * each with a `path`); unknown fields are refused.
 */
import Type from 'typebox';
import { Text } from '../../contract/common.js';
import { errors } from '../../contract/errors.js';
import { configChecker, type ConfigChecker } from './config-check.js';
import { nowTimestamp } from '../../ledger/time.js';
import { newId } from '../../store/ids.js';
import type { Database } from '../../store/schema.js';
import type { Store } from '../../store/store.js';

const PathConfig = Type.Object(
  { path: Text({ minLength: 1, maxLength: 4096, description: 'file (jsonl) or directory (dir) the collector reads' }) },
  { additionalProperties: false },
);
export const SOURCE_KINDS: Readonly<Record<string, ConfigChecker>> = { jsonl: configChecker(PathConfig), dir: configChecker(PathConfig) };

export interface SourceInput {
  name: string;
  kind: string;
  tenant: string;
  enabled?: boolean;
  poll_interval_s?: number;
  config: Record<string, unknown>;
}

export interface SourceView {
  id: string;
  name: string;
  kind: string;
  tenant: string;
  enabled: boolean;
  poll_interval_s: number;
  config: Record<string, unknown>;
  last_seen_at: string | null;
  counts: Record<string, number>;
  version: number;
  created_at: string;
  updated_at: string;
}

type Row = Database['console_sources'];

function viewOf(r: Row): SourceView {
  return {
    id: r.id,
    name: r.name,
    kind: r.kind,
    tenant: r.scope_tenant_id,
    enabled: Number(r.enabled) === 1,
    poll_interval_s: Number(r.poll_interval_s),
    config: JSON.parse(r.config) as Record<string, unknown>,
    last_seen_at: r.last_seen_at,
    counts: JSON.parse(r.counts) as Record<string, number>,
    version: Number(r.version),
    created_at: r.created_at,
    updated_at: r.updated_at,
  };
}

export async function putSource(store: Store, input: SourceInput): Promise<{ view: SourceView; created: boolean }> {
  const checker = Object.prototype.hasOwnProperty.call(SOURCE_KINDS, input.kind) ? SOURCE_KINDS[input.kind] : undefined;
  if (!checker)
    throw errors.badRequest(`unknown source kind ${JSON.stringify(input.kind)}; known: ${Object.keys(SOURCE_KINDS).join(', ')}`);
  if (!checker.check(input.config))
    throw errors.badRequest(`config of a ${input.kind} source: ${checker.explain(input.config).replace(/\(root\)/g, 'config')}`);
  return store.transaction(async (tx) => {
    const t = await tx.selectFrom('tenants').select('id').where('id', '=', input.tenant).where('deleted_at', 'is', null).executeTakeFirst();
    if (!t) throw errors.notFound('tenant');
    const now = nowTimestamp();
    const values = {
      name: input.name,
      kind: input.kind,
      scope_tenant_id: input.tenant,
      enabled: input.enabled === false ? 0 : 1,
      poll_interval_s: input.poll_interval_s ?? 60,
      config: JSON.stringify(input.config),
    };
    const cur = await tx.selectFrom('console_sources').selectAll().where('name', '=', input.name).executeTakeFirst();
    if (cur) {
      await tx
        .updateTable('console_sources')
        .set({ ...values, version: Number(cur.version) + 1, updated_at: now })
        .where('id', '=', cur.id)
        .execute();
      return {
        view: viewOf(await tx.selectFrom('console_sources').selectAll().where('id', '=', cur.id).executeTakeFirstOrThrow()),
        created: false,
      };
    }
    const row: Row = { id: newId(), ...values, last_seen_at: null, counts: '{}', version: 1, created_at: now, updated_at: now };
    await tx.insertInto('console_sources').values(row).execute();
    return { view: viewOf(row), created: true };
  });
}

export async function listSources(store: Store, tenant?: string): Promise<SourceView[]> {
  return store.transaction(async (tx) => {
    let q = tx.selectFrom('console_sources').selectAll();
    if (tenant !== undefined) q = q.where('scope_tenant_id', '=', tenant);
    return (await q.orderBy('name').execute()).map(viewOf);
  });
}

export async function deleteSource(store: Store, name: string): Promise<SourceView | undefined> {
  return store.transaction(async (tx) => {
    const cur = await tx.selectFrom('console_sources').selectAll().where('name', '=', name).executeTakeFirst();
    if (!cur) return undefined;
    await tx.deleteFrom('console_sources').where('id', '=', cur.id).execute();
    return viewOf(cur);
  });
}
