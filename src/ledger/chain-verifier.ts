/**
 * Server-side verification of a stored chain (`GET /v1/audit/verify`): reads the chain in seq
 * ranges on this thread and verifies the ranges in the worker pool in parallel (verify-chunk.ts),
 * then merges the reports in order (verify.ts `mergeChunks`). Each range carries the stored record
 * before it as its anchor, so ranges are independent. The heads table gives the expected tip, so a
 * truncated tail is reported. Reads are small ranges so the event loop stays responsive.
 */
import type { Store } from '../store/store-types.js';
import type { ExportSource } from '../workers/export-protocol.js';
import type { LedgerPool } from '../workers/pool.js';
import { keySpecs, type KeySet } from './keyset.js';
import { readHashAt, readHead, readRange } from './ledger-store.js';
import { mergeChunks, type VerifyReport } from './verify.js';
import { verifyChunk, type ChainAnchor, type ChunkReport } from './verify-chunk.js';

/** Options of {@link verifyStoredChain}. */
export interface StoredVerifyOptions {
  /** First seq to verify (default 1); the record before it is the anchor. */
  from?: number;
  keys: KeySet;
  /** Verify every event signature (default true). */
  signatures?: boolean;
  /** null verifies on this thread. */
  pool: LedgerPool | null;
  /** Records per range (default 4096 read here, 16384 read by workers). */
  chunkSize?: number;
  /** Where workers can read the store themselves (read-only); with a pool, ranges are read there. */
  source?: ExportSource;
}

/** Verify a tenant's stored chain into the DECISIONS.md report. */
export async function verifyStoredChain(store: Store, tenant: string, opts: StoredVerifyOptions): Promise<VerifyReport> {
  const from = Math.max(1, opts.from ?? 1);
  const chunkSize = Math.max(1, opts.chunkSize ?? 4096);
  const signatures = opts.signatures ?? true;
  const { head, anchorHash } = await store.withTenant(tenant, async (tx) => ({
    head: await readHead(tx, tenant),
    anchorHash: from > 1 ? await readHashAt(tx, tenant, from - 1) : null,
  }));
  const specs = opts.pool === null ? [] : keySpecs(opts.keys);
  if (opts.pool !== null && opts.source !== undefined && head !== null) {
    return verifyRanges(store, tenant, from, head, { ...opts, pool: opts.pool, source: opts.source, specs, signatures });
  }
  const anchor0: ChainAnchor | null = anchorHash === null ? null : { seq: from - 1, hash: anchorHash };
  const reports: Array<Promise<ChunkReport>> = [];
  const window = Math.max(2, (opts.pool?.threads ?? 1) * 2);
  let anchor = anchor0;
  let next = from;
  let position = from;
  for (;;) {
    // Read past the head too: rows beyond it would be a fork the head does not know.
    const records = await store.withTenant(tenant, (tx) => readRange(tx, tenant, next, next + chunkSize - 1));
    if (records.length === 0 && next > from) break;
    const ctx = { tenant, firstSeq: position, anchor, head, signatures };
    if (opts.pool === null) {
      reports.push(Promise.resolve(verifyChunk(records, { ...ctx, keys: opts.keys })));
      // Yield between ranges so other requests are served.
      await new Promise((r) => setImmediate(r));
    } else {
      reports.push(opts.pool.verifyChunk({ records, ...ctx, keys: specs }).then((r) => r.report));
      if (reports.length >= window) await reports[reports.length - window];
    }
    if (records.length === 0) break;
    const last = records[records.length - 1];
    if (last === undefined) break;
    anchor = { seq: position + records.length - 1, hash: last.hash };
    position += records.length;
    // A gap (deleted rows) makes a range shorter in seq than in count; continue after the last stored seq.
    next = last.seq + 1;
    if (records.length < chunkSize && (head === null || last.seq >= head.seq)) break;
  }
  const done = await Promise.all(reports);
  // Checkpoints attesting a record in an earlier range: fetch those few stored hashes for the merge.
  const wanted = new Set<number>();
  for (const r of done) for (const d of r.checkpoints.deferred) wanted.add(d.attested_seq);
  const hashes = new Map<number, string>();
  if (wanted.size > 0) {
    await store.withTenant(tenant, async (tx) => {
      for (const seq of wanted) {
        const h = await readHashAt(tx, tenant, seq);
        if (h !== null) hashes.set(seq, h);
      }
    });
  }
  return mergeChunks(done, { from, head, resolve: (seq) => hashes.get(seq) });
}

/**
 * Range mode: workers read and verify seq ranges [a, b] up to the head on their own read-only
 * connections, so the main thread only plans and merges. A range that comes back with fewer records
 * than it spans, and is not the last, lost rows: reported as `seq-gap` at its first missing seq
 * (a range with no rows at all would otherwise pass unnoticed).
 */
async function verifyRanges(
  store: Store,
  tenant: string,
  from: number,
  head: ChainAnchor,
  opts: StoredVerifyOptions & { pool: LedgerPool; source: ExportSource; specs: ReturnType<typeof keySpecs>; signatures: boolean },
): Promise<VerifyReport> {
  const size = Math.max(1, opts.chunkSize ?? 16384);
  const jobs: Array<{ fromSeq: number; toSeq: number; report: Promise<ChunkReport> }> = [];
  for (let a = from; a <= head.seq; a += size) {
    const toSeq = Math.min(head.seq, a + size - 1);
    const report = opts.pool
      .verifyRange({ source: opts.source, tenant, fromSeq: a, toSeq, head, signatures: opts.signatures, keys: opts.specs })
      .then((r) => r.report);
    jobs.push({ fromSeq: a, toSeq, report });
  }
  const reports: ChunkReport[] = [];
  for (let i = 0; i < jobs.length; i++) {
    const job = jobs[i] as (typeof jobs)[number];
    const r = await job.report;
    const span = job.toSeq - job.fromSeq + 1;
    if (i < jobs.length - 1 && r.chain.break_at === null && r.count < span) {
      reports.push({ ...r, chain: { checked: r.chain.checked, break_at: job.fromSeq + r.count, reason: 'seq-gap' } });
    } else {
      reports.push(r);
    }
  }
  const wanted = new Set<number>();
  for (const r of reports) for (const d of r.checkpoints.deferred) wanted.add(d.attested_seq);
  const hashes = new Map<number, string>();
  if (wanted.size > 0) {
    await store.withTenant(tenant, async (tx) => {
      for (const seq of wanted) {
        const h = await readHashAt(tx, tenant, seq);
        if (h !== null) hashes.set(seq, h);
      }
    });
  }
  return mergeChunks(reports, { from, head, resolve: (seq) => hashes.get(seq) });
}
