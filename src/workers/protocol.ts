/**
 * The typed boundary between the main thread and the ledger worker: one request and one result type
 * per job. Both sides import these; payloads are structured-clone-safe (no functions, no KeyObjects).
 */
import type { AuditRecord } from '../ledger/record.js';
import type { KeySpec } from '../ledger/keyset.js';
import type { SignatureAlgorithm } from '../ledger/signers.js';
import type { ChainAnchor, ChunkReport } from '../ledger/verify-chunk.js';
import type { ExportSource } from './export-protocol.js';

/** Private key material handed to every worker once, at pool start (workerData). */
export interface SigningKeyMaterial {
  key_id: string;
  algorithm: SignatureAlgorithm;
  /** PKCS#8 PEM */
  pem: string;
}

/** What each ledger worker receives as workerData. */
export interface LedgerWorkerData {
  signingKeys: SigningKeyMaterial[];
}

/** Sign the event preimages of a hashed batch (see ledger/chain.ts `hashBatch`). */
export interface SignBatchRequest {
  kind: 'sign-batch';
  keyId: string;
  tenant: string;
  firstSeq: number;
  /** 32 bytes per record, in seq order */
  hashes: Uint8Array;
}

/** Signatures back to back, `sigLength` bytes each, in the order of the request's hashes. */
export interface SignBatchResult {
  kind: 'sign-batch';
  sigLength: number;
  sigs: Uint8Array;
}

/** Verify one contiguous chunk of a chain (see ledger/verify-chunk.ts). */
export interface VerifyChunkRequest {
  kind: 'verify-chunk';
  records: AuditRecord[];
  tenant: string;
  firstSeq: number;
  anchor: ChainAnchor | null;
  head: ChainAnchor | null;
  signatures: boolean;
  keys: KeySpec[];
  /** records read back from an export: meta without its blind (verify-chunk.ts `metaUnbound`) */
  metaUnbound?: boolean;
}

/** The chunk's report, merged in order by ledger/verify.ts `mergeChunks`. */
export interface VerifyChunkResult {
  kind: 'verify-chunk';
  report: ChunkReport;
}

/**
 * Verify the stored records with seq in [fromSeq, toSeq], read by the worker on its own read-only
 * connection (copying records to a worker costs about as much as verifying them). The anchor is
 * read there too: the stored hash of seq fromSeq - 1.
 */
export interface VerifyRangeRequest {
  kind: 'verify-range';
  source: ExportSource;
  tenant: string;
  fromSeq: number;
  toSeq: number;
  head: ChainAnchor | null;
  signatures: boolean;
  keys: KeySpec[];
}

/** Any ledger job. */
export type LedgerRequest = SignBatchRequest | VerifyChunkRequest | VerifyRangeRequest;
/** Any ledger result. */
export type LedgerResult = SignBatchResult | VerifyChunkResult;
/** The result type of a given request type. */
export type ResultOf<R extends LedgerRequest> = R extends SignBatchRequest ? SignBatchResult : VerifyChunkResult;
