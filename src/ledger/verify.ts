/**
 * Pure verification of an ordered run of chain records into the DECISIONS.md verify report
 * (`GET /v1/audit/verify`, `svc audit verify`). See docs/audit-verification.md for what each reason means.
 */
import type { AuditRecord } from './record.js';
import type { KeySet } from './keyset.js';
import {
  verifyChunk,
  type ChainAnchor,
  type ChainReason,
  type CheckpointReason,
  type ChunkReport,
  type SignatureReason,
} from './verify-chunk.js';

export type { ChainAnchor, ChainReason, CheckpointReason, SignatureReason, ChunkReport } from './verify-chunk.js';

/** The verify report, field for field as DECISIONS.md pins it. */
export interface VerifyReport {
  ok: boolean;
  chain: { ok: boolean; checked: number; break_at: number | null; reason: ChainReason | null };
  checkpoints: {
    ok: boolean;
    status: 'ok' | 'failed' | 'pending';
    count: number;
    latest_attested_seq: number | null;
    first_bad_seq: number | null;
    reason: CheckpointReason | null;
  };
  signatures: { ok: boolean; checked: number; first_bad_seq: number | null; reason: SignatureReason | null };
}

/** Options of a verification run. */
export interface VerifyOptions {
  /** The chain's tenant; defaults to the first record's. */
  tenant?: string;
  /** Seq of the first record (verify a suffix); default 1. */
  from?: number;
  /** The stored record before `from` (seq from-1); without it the first link of a suffix is taken on trust. */
  anchor?: ChainAnchor | null;
  /** The chain head from the heads table; records ending before it are reported `tail-truncated`. */
  head?: ChainAnchor | null;
  /** Trusted public keys (with seq ranges for retired keys). */
  keys: KeySet;
  /** Verify every event signature (default true); false gives the fast chain + checkpoints check. */
  signatures?: boolean;
  /** Records per chunk (default 65536); chunks are independent and mergeable. */
  chunkSize?: number;
  /** Records from an export: meta without its blind (see ChunkContext `metaUnbound`). */
  metaUnbound?: boolean;
}

/** Verify an ordered array of records in-thread. */
export function verifyRecords(records: readonly AuditRecord[], opts: VerifyOptions): VerifyReport {
  const from = opts.from ?? 1;
  const tenant = opts.tenant ?? records[0]?.tenant ?? '';
  const chunkSize = Math.max(1, opts.chunkSize ?? 65536);
  const reports: ChunkReport[] = [];
  let anchor: ChainAnchor | null = opts.anchor ?? null;
  for (let off = 0; off < records.length || off === 0; off += chunkSize) {
    const chunk = records.slice(off, off + chunkSize);
    const report = verifyChunk(chunk, {
      tenant,
      firstSeq: from + off,
      anchor,
      keys: opts.keys,
      signatures: opts.signatures ?? true,
      head: opts.head ?? null,
      metaUnbound: opts.metaUnbound ?? false,
    });
    reports.push(report);
    anchor = report.last;
    if (records.length === 0) break;
  }
  return mergeChunks(reports, {
    from,
    head: opts.head ?? null,
    resolve: (seq) => records[seq - from]?.hash ?? (seq === from - 1 ? opts.anchor?.hash : undefined),
  });
}

/** What merging needs besides the chunk reports. */
export interface MergeOptions {
  from: number;
  head: ChainAnchor | null;
  /** Stored hash of a record by seq, for checkpoints that attest a record in an earlier chunk. */
  resolve: (seq: number) => string | undefined;
}

/** Merge chunk reports, given in seq order, into the final report. */
export function mergeChunks(reports: readonly ChunkReport[], opts: MergeOptions): VerifyReport {
  let checked = 0;
  let breakAt: number | null = null;
  let chainReason: ChainReason | null = null;
  let total = 0;
  let cpCount = 0;
  let latest: number | null = null;
  let cpBad: number | null = null;
  let cpReason: CheckpointReason | null = null;
  let sigChecked = 0;
  let sigBad: number | null = null;
  let sigReason: SignatureReason | null = null;
  // The claimed head (the heads table) must name the record at its seq: when that record's stored
  // hash is known here and differs, the chain breaks there (what the stored-chain verifier reports).
  const head = opts.head;
  const headStored = head !== null && head.hash !== '' ? opts.resolve(head.seq) : undefined;
  const headBad = head !== null && headStored !== undefined && headStored !== head.hash ? head.seq : null;
  // Key runs across chunks (verify-chunk.ts KeyRun): a key that signs again after another key took
  // over is key-out-of-range at the first record of its second run.
  const seenKeys = new Set<string>();
  let currentKey: string | undefined;
  for (const r of reports) {
    if (sigBad === null) {
      let runBad: number | null = null;
      for (const [key, first] of r.signatures.runs ?? []) {
        if (key === currentKey) continue;
        if (seenKeys.has(key)) {
          runBad = first;
          break;
        }
        seenKeys.add(key);
        currentKey = key;
      }
      if (runBad !== null && (r.signatures.first_bad_seq === null || runBad < r.signatures.first_bad_seq)) {
        sigChecked += runBad - r.firstSeq;
        sigBad = runBad;
        sigReason = 'key-out-of-range';
      } else {
        sigChecked += r.signatures.checked;
        if (r.signatures.first_bad_seq !== null) {
          sigBad = r.signatures.first_bad_seq;
          sigReason = r.signatures.reason;
        }
      }
    }
    if (breakAt !== null) continue; // nothing after a chain break is trusted for chain or checkpoints
    total += r.count;
    checked += r.chain.checked;
    if (cpBad === null) {
      cpCount += r.checkpoints.count;
      for (const d of r.checkpoints.deferred) {
        // An attested record outside what we hold (before `from` and its anchor) cannot be compared;
        // the checkpoint signature was still verified inside the chunk.
        const stored = opts.resolve(d.attested_seq);
        if (stored !== undefined && stored !== d.head_hash && (cpBad === null || d.seq < cpBad)) {
          cpBad = d.seq;
          cpReason = 'checkpoint-link-mismatch';
        }
      }
      if (r.checkpoints.first_bad_seq !== null && (cpBad === null || r.checkpoints.first_bad_seq < cpBad)) {
        cpBad = r.checkpoints.first_bad_seq;
        cpReason = r.checkpoints.reason;
      }
      const l = r.checkpoints.latest_attested_seq;
      if (l !== null && (latest === null || l > latest)) latest = l;
    }
    if (
      headBad !== null &&
      headBad >= r.firstSeq &&
      headBad < r.firstSeq + r.count &&
      (r.chain.break_at === null || r.chain.break_at > headBad)
    ) {
      checked -= r.chain.checked - (headBad - r.firstSeq);
      breakAt = headBad;
      chainReason = 'hash-mismatch';
    } else if (r.chain.break_at !== null) {
      breakAt = r.chain.break_at;
      chainReason = r.chain.reason;
    }
  }
  if (breakAt === null) {
    const lastSeq = opts.from + total - 1;
    if (opts.head !== null && opts.head.seq > lastSeq) {
      breakAt = lastSeq + 1;
      chainReason = 'tail-truncated';
    } else if (total === 0) {
      chainReason = 'no-events';
    }
  }
  const chainOk = breakAt === null;
  const status: VerifyReport['checkpoints']['status'] = cpBad !== null ? 'failed' : cpCount === 0 ? 'pending' : 'ok';
  const sigOk = sigBad === null;
  return {
    ok: chainOk && checked > 0 && status !== 'failed' && sigOk,
    chain: { ok: chainOk, checked, break_at: breakAt, reason: chainReason },
    checkpoints: {
      ok: status !== 'failed',
      status,
      count: cpCount,
      latest_attested_seq: latest,
      first_bad_seq: cpBad,
      reason: cpBad !== null ? cpReason : cpCount === 0 ? 'no-checkpoints' : null,
    },
    signatures: { ok: sigOk, checked: sigChecked, first_bad_seq: sigBad, reason: sigReason },
  };
}
