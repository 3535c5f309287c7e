/**
 * Commits one pushed batch exactly once (ingest.proto "Durability", "Idempotency").
 *
 * 1. One store transaction (tenant-bound, RLS on Postgres): existence checks, the access edges
 *    through accessmap's `ingestInTransaction` (run inside this transaction), findings and cost
 *    samples, and the `ingest_batches` row keyed by (tenant, batch_id) with the chain's head seq.
 *    The primary key makes "seen" and "stored" one fact: a re-sent batch finds its row and adds
 *    nothing. Batches of all streams that queue up meanwhile share that transaction
 *    (ingest-group.ts), each with its own row and answer.
 * 2. The ledger record `ingest.batch` (payload_hash = SHA-256 of the canonical accepted items);
 *    the ledger pipeline group-commits the records of a group. The row's `ledger_seq` is noted by
 *    a later transaction. If the process died before that note, the re-sent batch finds
 *    `ledger_seq` null, looks for its record above `head_seq` (it may have committed just before
 *    the crash) and appends it only when absent: the ledger also holds each batch once.
 * The batch is acked once both 1 and 2 have committed.
 */
import type { Insertable, Transaction } from 'kysely';
import { isUniqueViolation } from '../store/store-error.js';
import { busOf } from '../events/bus-registry.js';
import type { BusEvent } from '../events/event-types.js';
import { canonicalMeta } from '../ledger/canonical-json.js';
import { readHead, readRecords } from '../ledger/ledger-store.js';
import { nowTimestamp } from '../ledger/time.js';
import { uuid7 } from '../ledger/uuid7.js';
import { afterIngestCommit, ingestInTransaction, type IngestCommitted, type Observation } from '../modules/accessmap/edge-store.js';
import { chunks } from '../modules/accessmap/node-store.js';
import { agentsByExternalId, agentsById, nodesById } from '../modules/accessmap/node-lookup.js';
import type { Services } from '../serve/services.js';
import type { Database } from '../store/schema.js';
import type { IngestItemsTable } from '../store/schema-ingest.js';
import type { SqliteHandle, Store } from '../store/store-types.js';
import type { CallIdentity } from './call-auth.js';
import { StoreGroups } from './ingest-group.js';
import { payloadHash } from './ingest-hash.js';
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
  const reject = (error: string): Ack => ({
    batch_id: batch.batch_id,
    status: 'REJECTED',
    accepted: 0,
    rejected: [],
    ledger_seq: 0,
    error,
  });
  if (!UUID.test(batchId)) return reject('batch_id must be a UUID');
  const items = batch.edges.length + batch.findings.length + batch.costs.length;
  if (items > MAX_BATCH_ITEMS) return reject(`a batch carries at most ${MAX_BATCH_ITEMS} items, this one ${items}`);
  if (batch.collector.length > 128) return reject('collector is longer than 128 characters');
  return serialised(`${who.tenant}|${batchId}`, async () => {
    const now = nowTimestamp();
    const groups = groupsOf(services.store);
    let stored: Stored;
    try {
      stored = await groups.submit(who.tenant, { batchId, collector: batch.collector, valid: validateBatch(batch, now), now });
    } catch (err) {
      // Another process committed the same batch id meanwhile: answer as for any duplicate.
      if (!isUniqueViolation(err)) throw err;
      const other = await readBatch(services.store, who.tenant, batchId);
      if (!other) throw err;
      stored = { row: other, seen: true };
    }
    return finishLedger(services, groups, who, batchId, stored);
  });
}

/** One batch waiting for its group's transaction. */
interface Job {
  batchId: string;
  collector: string;
  valid: ValidatedBatch;
  now: string;
}

/** A batch's row after its group committed; `seen`: it was there before (a re-send). */
interface Stored {
  row: BatchRow;
  seen: boolean;
}

const groupsByStore = new WeakMap<Store, StoreGroups<Job, Stored>>();

/** The group committer of a store (one per store, shared by every stream). */
function groupsOf(store: Store): StoreGroups<Job, Stored> {
  let g = groupsByStore.get(store);
  if (!g) {
    g = new StoreGroups<Job, Stored>(
      async (tenant, jobs, notes) => {
        if (jobs.length === 0 && notes.size === 0) return [];
        const group = await store.withTenant(tenant, (tx) => storeGroup(store, tx, tenant, jobs, notes));
        // Committed: its `edge.observed` goes to the bus's subscribers (it is in the event log already).
        if (group.events.length > 0) busOf(store)?.announce(group.events);
        // The access map's recent level may ask for a merge before the acks go out.
        await afterIngestCommit(store, group.committed);
        return group.stored;
      },
      (job) => job.valid.edges.length + job.valid.findings.length + job.valid.costs.length,
    );
    groupsByStore.set(store, g);
  }
  return g;
}

function selectBatches(tx: Tx, tenant: string, batchIds: string[]): Promise<Array<BatchRow & { batch_id: string }>> {
  return tx
    .selectFrom('ingest_batches')
    .select(['batch_id', 'accepted', 'rejected', 'payload_hash', 'head_seq', 'ledger_seq', 'collector'])
    .where('tenant_id', '=', tenant)
    .where('batch_id', 'in', batchIds)
    .execute();
}

async function readBatch(store: Store, tenant: string, batchId: string): Promise<BatchRow | undefined> {
  return store.withTenant(tenant, async (tx) => (await selectBatches(tx, tenant, [batchId]))[0]);
}

/**
 * The store half of a group in one transaction: the pending `ledger_seq` notes, the "seen?" check
 * of every batch (a seen batch writes nothing), then each new batch's existence checks and
 * rejections, the access edges of all new batches through accessmap's `ingestInTransaction` (run
 * inside this transaction), findings and cost samples, and one `ingest_batches` row per new batch.
 */
async function storeGroup(
  store: Store,
  tx: Tx,
  tenant: string,
  jobs: Job[],
  notes: Map<string, number>,
): Promise<{ stored: Stored[]; committed: IngestCommitted; events: BusEvent[] }> {
  for (const [batchId, seq] of notes)
    await tx
      .updateTable('ingest_batches')
      .set({ ledger_seq: seq })
      .where('tenant_id', '=', tenant)
      .where('batch_id', '=', batchId)
      .execute();
  if (jobs.length === 0) return { stored: [], committed: { waiting: 0 }, events: [] };
  const db = store.sqlite?.handle(tx);
  const existing = new Map<string, BatchRow>();
  for (const c of chunks(
    jobs.map((j) => j.batchId),
    500,
  ))
    for (const r of await selectBatches(tx, tenant, c)) existing.set(r.batch_id, r);
  const fresh = jobs.filter((j) => !existing.has(j.batchId));
  const observations: Observation[] = [];
  const items: Array<Insertable<IngestItemsTable>> = [];
  const prepared: Array<Omit<BatchRow, 'head_seq' | 'ledger_seq'>> = [];
  for (const job of fresh) {
    const { valid, batchId, now } = job;
    const rejected = [...valid.rejected];
    const edges = await knownEnds(tx, db, tenant, valid.edges, rejected);
    for (const e of edges)
      observations.push({
        origin: e.origin,
        resource: e.resource,
        mode: e.mode,
        confidence: e.confidence,
        attribution: e.attribution,
        signal_source: e.signal_source,
        observed_at: e.observed_at,
        count: e.count,
      });
    for (const { index: _i, ...f } of valid.findings)
      items.push({
        id: uuid7(),
        tenant_id: tenant,
        batch_id: batchId,
        created_at: now,
        kind: 'finding',
        body: canonicalMeta(f),
        observed_at: f.observed_at,
      });
    for (const { index: _i, ...c } of valid.costs)
      items.push({
        id: uuid7(),
        tenant_id: tenant,
        batch_id: batchId,
        created_at: now,
        kind: 'cost',
        body: canonicalMeta(c),
        observed_at: c.observed_at,
      });
    rejected.sort((a, b) => (a.kind === b.kind ? a.index - b.index : a.kind < b.kind ? -1 : 1));
    const payload_hash = payloadHash(batchId, edges, valid.findings, valid.costs);
    prepared.push({
      accepted: edges.length + valid.findings.length + valid.costs.length,
      rejected: JSON.stringify(rejected),
      payload_hash,
      collector: job.collector,
    });
  }
  // In this transaction, so the edges and the batch rows commit together.
  const committed = await ingestInTransaction(store, tx, tenant, observations);
  // One `edge.observed` per group, in its transaction: the durable event log has it iff the edges committed.
  const bus = busOf(store);
  const events =
    bus && observations.length > 0 && fresh[0]
      ? await bus.record(tx, [
          {
            type: 'edge.observed',
            tenant,
            subject: `ingest_batch/${fresh[0].batchId}`,
            data: { count: observations.length, batches: fresh.map((j) => j.batchId) },
          },
        ])
      : [];
  for (const chunk of chunks(items, 200)) await tx.insertInto('ingest_items').values(chunk).execute();
  const head_seq = (await readHead(tx, tenant))?.seq ?? 0;
  const rows = fresh.map((job, i) => ({ ...(prepared[i] as (typeof prepared)[number]), head_seq, ledger_seq: null }));
  for (const chunk of chunks(
    rows.map((r, i) => ({ tenant_id: tenant, batch_id: (fresh[i] as Job).batchId, created_at: (fresh[i] as Job).now, ...r })),
    100,
  ))
    await tx.insertInto('ingest_batches').values(chunk).execute();
  const stored = new Map(fresh.map((j, i) => [j.batchId, rows[i] as BatchRow]));
  return {
    stored: jobs.map((j) => {
      const seen = existing.get(j.batchId);
      return seen ? { row: seen, seen: true } : { row: stored.get(j.batchId) as BatchRow, seen: false };
    }),
    committed,
    events,
  };
}

/** Drops (as rejections) edges whose agent, or node given by id, does not exist in the tenant. */
async function knownEnds(
  tx: Tx,
  db: SqliteHandle | undefined,
  tenant: string,
  edges: ValidEdge[],
  rejected: Rejection[],
): Promise<ValidEdge[]> {
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
  for (const r of await agentsById(tx, db, tenant, [...agentIds])) foundAgents.add(r.id);
  for (const r of await agentsByExternalId(tx, db, tenant, [...agentRefs])) foundRefs.add(r.external_id);
  for (const r of await nodesById(tx, db, tenant, [...nodeIds])) foundNodes.set(r.id, r.kind);
  return edges.filter((e) => {
    let reason: string | undefined;
    if (e.origin.kind === 'agent') {
      if (e.origin.id !== undefined ? !foundAgents.has(e.origin.id) : !foundRefs.has(e.origin.ref as string))
        reason = `unknown agent ${e.origin.id ?? e.origin.ref} (register it with POST /v1/agents first)`;
    } else if (e.origin.id !== undefined && foundNodes.get(e.origin.id) !== e.origin.kind)
      reason = `unknown ${e.origin.kind} ${e.origin.id}`;
    if (!reason && e.resource.id !== undefined && foundNodes.get(e.resource.id) !== 'resource')
      reason = `unknown resource ${e.resource.id}`;
    if (reason) rejected.push({ kind: 'edge', index: e.index, reason });
    return !reason;
  });
}

/**
 * The ledger half: append the batch's record unless it is already there, then ack. Where the
 * record is gets noted on the batch row by a later group transaction (StoreGroups `note`): the
 * ack does not wait for that third commit, because the note is only a cache. A re-send that finds
 * no note looks for the record above `head_seq`, which is also what repairs a crash between the
 * store commit and the ledger record.
 */
async function finishLedger(
  services: Services,
  groups: StoreGroups<Job, Stored>,
  who: CallIdentity,
  batchId: string,
  { row, seen }: Stored,
): Promise<Ack> {
  let seq = row.ledger_seq === null ? null : Number(row.ledger_seq);
  if (seq === null) {
    if (seen) {
      const found = await services.store.withTenant(who.tenant, (tx) =>
        readRecords(tx, who.tenant, Number(row.head_seq) + 1, 1, {
          action: LEDGER_ACTION,
          target_kind: 'ingest_batch',
          target_id: batchId,
        }),
      );
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
    groups.note(who.tenant, batchId, seq);
  }
  return {
    batch_id: batchId,
    status: seen ? 'DUPLICATE' : 'ACCEPTED',
    accepted: row.accepted,
    rejected: JSON.parse(row.rejected) as Rejection[],
    ledger_seq: seq,
    error: '',
  };
}
