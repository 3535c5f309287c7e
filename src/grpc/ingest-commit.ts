/**
 * Commits one pushed batch exactly once (ingest.proto "Durability", "Idempotency").
 *
 * 1. One store transaction (tenant-bound, RLS on Postgres): existence checks, the access edges
 *    through accessmap's `ingestObservations` (run inside this transaction), findings and cost
 *    samples, and the `ingest_batches` row keyed by (tenant, batch_id) with the chain's head seq.
 *    The primary key makes "seen" and "stored" one fact: a re-sent batch finds its row and adds
 *    nothing.
 * 2. The ledger record `ingest.batch` (payload_hash = SHA-256 of the canonical accepted items);
 *    then the row's `ledger_seq` is set. If the process died between 1 and 2, the re-sent batch
 *    finds `ledger_seq` null, looks for its record above `head_seq` (it may have committed just
 *    before the crash) and appends it only when absent: the ledger also holds each batch once.
 * Only then is the batch acked.
 */
import { createHash } from 'node:crypto';
import type { Transaction } from 'kysely';
import { isUniqueViolation } from '../core/agents/scope.js';
import { canonicalMeta } from '../ledger/canonical-json.js';
import { readHead, readRecords } from '../ledger/ledger-store.js';
import { nowTimestamp } from '../ledger/time.js';
import { uuid7 } from '../ledger/uuid7.js';
import { ingestObservations, type Observation } from '../modules/accessmap/edge-store.js';
import { chunks } from '../modules/accessmap/node-store.js';
import type { Services } from '../serve/services.js';
import type { Database } from '../store/schema.js';
import type { Store } from '../store/store.js';
import type { CallIdentity } from './call-auth.js';
import { UUID, validateBatch, type BatchMessage, type Rejection, type ValidatedBatch, type ValidEdge } from './ingest-items.js';

type Tx = Transaction<Database>;

/** Items per batch the core takes; larger batches are answered REJECTED. */
export const MAX_BATCH_ITEMS = 10_000;
export const LEDGER_ACTION = 'ingest.batch';

/** The answer to one batch (ingest.proto `BatchAck`). */
export interface Ack {
  batch_id: string;
  status: 'ACCEPTED' | 'DUPLICATE' | 'REJECTED';
  accepted: number;
  rejected: Rejection[];
  ledger_seq: number;
  error: string;
}

interface BatchRow {
  accepted: number;
  rejected: string;
  payload_hash: string;
  head_seq: number | string;
  ledger_seq: number | string | null;
  collector: string;
}

// One commit per (tenant, batch id) at a time in this process: a collector that reconnected may
// re-send a batch while its first attempt is still committing.
const inProcess = new Map<string, Promise<unknown>>();

async function serialised<T>(key: string, fn: () => Promise<T>): Promise<T> {
  while (inProcess.has(key)) await inProcess.get(key)?.catch(() => {});
  const p = fn();
  inProcess.set(key, p);
  try {
    return await p;
  } finally {
    inProcess.delete(key);
  }
}

/** Commit (or recognise) one batch for the call's tenant; ApiErrors mean "not committed, retry later". */
export async function commitBatch(services: Services, who: CallIdentity, batch: BatchMessage): Promise<Ack> {
  const batchId = batch.batch_id.toLowerCase();
  const reject = (error: string): Ack => ({ batch_id: batch.batch_id, status: 'REJECTED', accepted: 0, rejected: [], ledger_seq: 0, error });
  if (!UUID.test(batchId)) return reject('batch_id must be a UUID');
  const items = batch.edges.length + batch.findings.length + batch.costs.length;
  if (items > MAX_BATCH_ITEMS) return reject(`a batch carries at most ${MAX_BATCH_ITEMS} items, this one ${items}`);
  if (batch.collector.length > 128) return reject('collector is longer than 128 characters');
  return serialised(`${who.tenant}|${batchId}`, async () => {
    const now = nowTimestamp();
    const valid = validateBatch(batch, now);
    let row: BatchRow;
    let seen = false;
    try {
      // One transaction: the "seen?" check and the writes (a seen batch writes nothing).
      row = await services.store.withTenant(who.tenant, async (tx) => {
        const existing = await selectBatch(tx, who.tenant, batchId);
        if (existing) {
          seen = true;
          return existing;
        }
        return storeBatch(services.store, tx, who.tenant, batchId, batch.collector, valid, now);
      });
    } catch (err) {
      // Another process committed the same batch id meanwhile: answer as for any duplicate.
      if (!isUniqueViolation(err)) throw err;
      const other = await readBatch(services.store, who.tenant, batchId);
      if (!other) throw err;
      return finishLedger(services, who, batchId, other, 'DUPLICATE');
    }
    return finishLedger(services, who, batchId, row, seen ? 'DUPLICATE' : 'ACCEPTED');
  });
}

function selectBatch(tx: Tx, tenant: string, batchId: string): Promise<BatchRow | undefined> {
  return tx.selectFrom('ingest_batches').select(['accepted', 'rejected', 'payload_hash', 'head_seq', 'ledger_seq', 'collector']).where('tenant_id', '=', tenant).where('batch_id', '=', batchId).executeTakeFirst();
}

async function readBatch(store: Store, tenant: string, batchId: string): Promise<BatchRow | undefined> {
  return store.withTenant(tenant, (tx) => selectBatch(tx, tenant, batchId));
}

/** The store half: everything of the batch in one transaction. */
async function storeBatch(store: Store, tx: Tx, tenant: string, batchId: string, collector: string, valid: ValidatedBatch, now: string): Promise<BatchRow> {
  const rejected = [...valid.rejected];
  const edges = await knownEnds(tx, tenant, valid.edges, rejected);
  // accessmap's service function, run inside this transaction (it opens its own through
  // `store.withTenant`; this view of the store hands it ours), so edges and the batch row commit together.
  const inTx = Object.assign(Object.create(store) as Store, { withTenant: <T>(t: string, fn: (tx: Tx) => Promise<T>) => (t === tenant ? fn(tx) : Promise.reject(new Error('tenant mismatch'))) });
  const observations: Observation[] = edges.map((e) => ({
    origin: e.origin,
    resource: e.resource,
    mode: e.mode,
    confidence: e.confidence,
    attribution: e.attribution,
    signal_source: e.signal_source,
    observed_at: e.observed_at,
    count: e.count,
  }));
  await ingestObservations(inTx, tenant, observations);
  const items = [
    ...valid.findings.map(({ index: _i, ...f }) => ({ kind: 'finding', body: canonicalMeta(f), observed_at: f.observed_at })),
    ...valid.costs.map(({ index: _i, ...c }) => ({ kind: 'cost', body: canonicalMeta(c), observed_at: c.observed_at })),
  ].map((it) => ({ id: uuid7(), tenant_id: tenant, batch_id: batchId, created_at: now, ...it }));
  for (const chunk of chunks(items, 200)) await tx.insertInto('ingest_items').values(chunk).execute();
  const accepted = edges.length + valid.findings.length + valid.costs.length;
  rejected.sort((a, b) => (a.kind === b.kind ? a.index - b.index : a.kind < b.kind ? -1 : 1));
  const payload_hash = createHash('sha256')
    .update(canonicalMeta({ batch_id: batchId, edges: edges.map(({ index: _i, ...e }) => e), findings: valid.findings.map(({ index: _i, ...f }) => f), costs: valid.costs.map(({ index: _i, ...c }) => c) }))
    .digest('hex');
  const head = await readHead(tx, tenant);
  const row = { accepted, rejected: JSON.stringify(rejected), payload_hash, head_seq: head?.seq ?? 0, ledger_seq: null, collector };
  await tx.insertInto('ingest_batches').values({ tenant_id: tenant, batch_id: batchId, created_at: now, ...row }).execute();
  return row;
}

/** Drops (as rejections) edges whose agent, or node given by id, does not exist in the tenant. */
async function knownEnds(tx: Tx, tenant: string, edges: ValidEdge[], rejected: Rejection[]): Promise<ValidEdge[]> {
  const agentIds = new Set<string>();
  const agentRefs = new Set<string>();
  const nodeIds = new Set<string>();
  for (const e of edges) {
    if (e.origin.kind === 'agent') (e.origin.id !== undefined ? agentIds : agentRefs).add((e.origin.id ?? e.origin.ref) as string);
    else if (e.origin.id !== undefined) nodeIds.add(e.origin.id);
    if (e.resource.id !== undefined) nodeIds.add(e.resource.id);
  }
  const foundAgents = new Set<string>();
  const foundRefs = new Set<string>();
  const foundNodes = new Map<string, string>();
  for (const c of chunks([...agentIds], 500)) for (const r of await tx.selectFrom('agents').select('id').where('tenant_id', '=', tenant).where('id', 'in', c).execute()) foundAgents.add(r.id);
  for (const c of chunks([...agentRefs], 500)) for (const r of await tx.selectFrom('agents').select('external_id').where('tenant_id', '=', tenant).where('external_id', 'in', c).execute()) foundRefs.add(r.external_id);
  for (const c of chunks([...nodeIds], 500)) for (const r of await tx.selectFrom('access_nodes').select(['id', 'kind']).where('tenant_id', '=', tenant).where('id', 'in', c).execute()) foundNodes.set(r.id, r.kind);
  return edges.filter((e) => {
    let reason: string | undefined;
    if (e.origin.kind === 'agent') {
      if (e.origin.id !== undefined ? !foundAgents.has(e.origin.id) : !foundRefs.has(e.origin.ref as string)) reason = `unknown agent ${e.origin.id ?? e.origin.ref} (register it with POST /v1/agents first)`;
    } else if (e.origin.id !== undefined && foundNodes.get(e.origin.id) !== e.origin.kind) reason = `unknown ${e.origin.kind} ${e.origin.id}`;
    if (!reason && e.resource.id !== undefined && foundNodes.get(e.resource.id) !== 'resource') reason = `unknown resource ${e.resource.id}`;
    if (reason) rejected.push({ kind: 'edge', index: e.index, reason });
    return !reason;
  });
}

/** The ledger half: append the batch's record unless it is already there, then ack. */
async function finishLedger(services: Services, who: CallIdentity, batchId: string, row: BatchRow, status: 'ACCEPTED' | 'DUPLICATE'): Promise<Ack> {
  let seq = row.ledger_seq === null ? null : Number(row.ledger_seq);
  if (seq === null) {
    if (status === 'DUPLICATE') {
      const found = await services.store.withTenant(who.tenant, (tx) => readRecords(tx, who.tenant, Number(row.head_seq) + 1, 1, { action: LEDGER_ACTION, target_kind: 'ingest_batch', target_id: batchId }));
      seq = found[0]?.seq ?? null;
    }
    if (seq === null) {
      const rejected = JSON.parse(row.rejected) as Rejection[];
      const rec = await services.audit.append(who.tenant, {
        actor: who.principal.actor,
        actor_kind: who.principal.actorKind,
        action: LEDGER_ACTION,
        target_kind: 'ingest_batch',
        target_id: batchId,
        meta: { collector: row.collector, accepted: row.accepted, rejected: rejected.length, request_id: who.requestId },
        payload_hash: row.payload_hash,
      });
      seq = rec.seq;
    }
    const ledgerSeq = seq;
    await services.store.withTenant(who.tenant, (tx) => tx.updateTable('ingest_batches').set({ ledger_seq: ledgerSeq }).where('tenant_id', '=', who.tenant).where('batch_id', '=', batchId).execute());
  }
  return { batch_id: batchId, status, accepted: row.accepted, rejected: JSON.parse(row.rejected) as Rejection[], ledger_seq: seq, error: '' };
}
