/** Piscina entry for ledger jobs: thin, no I/O; it calls the pure ledger functions. */
import { workerData } from 'piscina';
import { signHashes } from '../ledger/chain.js';
import { keySetFromSpecs } from '../ledger/keyset.js';
import { createSigner, type Signer } from '../ledger/signers.js';
import { verifyChunk } from '../ledger/verify-chunk.js';
import { WorkerErrors } from './errors.js';
import BetterSqlite3 from 'better-sqlite3';
import { sqlitePackedRangeReader, type PackedRows } from '../ledger/packed-reader.js';
import { verifyPackedChunk } from '../ledger/verify-packed.js';
import { openReader, sourceKey, type LedgerReader } from './export-source.js';
import type { KeySpec } from '../ledger/keyset.js';
import type { KeySet } from '../ledger/keyset.js';
import type {
  LedgerRequest,
  LedgerResult,
  LedgerWorkerData,
  SignBatchRequest,
  VerifyChunkRequest,
  VerifyRangeRequest,
  SignBatchResult,
  VerifyChunkResult,
} from './protocol.js';

// Key material arrives once per worker (workerData), and KeyObjects are built once, not per task.
const signers = new Map<string, Signer>();
for (const k of (workerData as LedgerWorkerData | undefined)?.signingKeys ?? []) {
  signers.set(k.key_id, createSigner(k.algorithm, k.pem));
}

function signBatch(req: SignBatchRequest): SignBatchResult {
  const signer = signers.get(req.keyId);
  if (signer === undefined) throw WorkerErrors.unknownSigningKey(req.keyId);
  const { sigLength, sigs } = signHashes(signer, req.tenant, req.firstSeq, req.hashes);
  return { kind: 'sign-batch', sigLength, sigs };
}

function verify(req: VerifyChunkRequest): VerifyChunkResult {
  const report = verifyChunk(req.records, {
    tenant: req.tenant,
    firstSeq: req.firstSeq,
    anchor: req.anchor,
    head: req.head,
    signatures: req.signatures,
    keys: keySetFromSpecs(req.keys),
    metaUnbound: req.metaUnbound === true,
  });
  return { kind: 'verify-chunk', report };
}

// One reader per source and one key set per key list, kept for the worker's life.
const readers = new Map<string, LedgerReader>();
let keyCache: { specs: string; keys: KeySet } | undefined;

function keysOf(specs: KeySpec[]): KeySet {
  const id = specs.map((s) => `${s.key_id}:${s.first_seq ?? ''}:${s.last_seq ?? ''}`).join(',');
  if (keyCache?.specs !== id) keyCache = { specs: id, keys: keySetFromSpecs(specs) };
  return keyCache.keys;
}

// SQLite: a raw read-only handle per file and each range packed into one buffer, verified as bytes (verify-packed.ts).
const sqliteHandles = new Map<string, BetterSqlite3.Database>();
const sqliteReaders = new Map<string, (tenant: string, fromSeq: number, toSeq: number) => PackedRows>();

function sqliteRows(file: string, signatures: boolean, tenant: string, lo: number, hi: number): PackedRows {
  const key = `${signatures ? 'full' : 'chain'}:${file}`;
  let read = sqliteReaders.get(key);
  if (read === undefined) {
    let db = sqliteHandles.get(file);
    if (db === undefined) {
      db = new BetterSqlite3(file, { readonly: true, fileMustExist: true, timeout: 5000 });
      sqliteHandles.set(file, db);
    }
    read = sqlitePackedRangeReader(db, signatures ? 'full' : 'chain');
    sqliteReaders.set(key, read);
  }
  return read(tenant, lo, hi);
}

async function verifyRange(req: VerifyRangeRequest): Promise<VerifyChunkResult> {
  // The record before the range is read along: it anchors the range's first link.
  const lo = Math.max(1, req.fromSeq - 1);
  const ctx = { tenant: req.tenant, firstSeq: req.fromSeq, head: req.head, signatures: req.signatures, keys: keysOf(req.keys) };
  if (req.source.kind === 'sqlite') {
    const rows = sqliteRows(req.source.file, req.signatures, req.tenant, lo, req.toSeq);
    const report = verifyPackedChunk(rows, { ...ctx, withAnchor: lo < req.fromSeq, columns: req.signatures ? 'full' : 'chain' });
    return { kind: 'verify-chunk', report };
  }
  const key = sourceKey(req.source);
  let reader = readers.get(key);
  if (reader === undefined) {
    reader = openReader(req.source);
    readers.set(key, reader);
  }
  const rows = await reader.read(req.tenant, lo, req.toSeq, {});
  const first = rows[0];
  const anchorRow = req.fromSeq > 1 && first !== undefined && first.seq === lo ? first : undefined;
  const report = verifyChunk(anchorRow === undefined ? rows : rows.slice(1), {
    ...ctx,
    anchor: anchorRow === undefined ? null : { seq: anchorRow.seq, hash: anchorRow.hash },
  });
  return { kind: 'verify-chunk', report };
}

/** The task handler Piscina calls (selected by name, so no default export is needed). */
export function handle(req: LedgerRequest): LedgerResult | Promise<LedgerResult> {
  switch (req.kind) {
    case 'sign-batch':
      return signBatch(req);
    case 'verify-chunk':
      return verify(req);
    case 'verify-range':
      return verifyRange(req);
  }
}
