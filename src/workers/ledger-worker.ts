/** Piscina entry for ledger jobs: thin, no I/O; it calls the pure ledger functions. */
import { workerData } from 'piscina';
import { signHashes } from '../ledger/chain.js';
import { keySetFromSpecs } from '../ledger/keyset.js';
import { createSigner, type Signer } from '../ledger/signers.js';
import { verifyChunk } from '../ledger/verify-chunk.js';
import { WorkerErrors } from './errors.js';
import type { LedgerRequest, LedgerResult, LedgerWorkerData, SignBatchRequest, VerifyChunkRequest, SignBatchResult, VerifyChunkResult } from './protocol.js';

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
  });
  return { kind: 'verify-chunk', report };
}

/** The task handler Piscina calls (selected by name, so no default export is needed). */
export function handle(req: LedgerRequest): LedgerResult {
  switch (req.kind) {
    case 'sign-batch':
      return signBatch(req);
    case 'verify-chunk':
      return verify(req);
  }
}
