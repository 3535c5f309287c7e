/**
 * Verification of a chain that arrives record by record (server pages, a multi-gigabyte export
 * file): records are cut into chunks as they come, each chunk is verified on its own (in the worker
 * pool when one is given, several at once) and only the chunk reports are kept, so memory stays flat
 * whatever the chain's length. The verdict is the one {@link verifyRecords} gives for the same
 * records: the same chunk verifier, anchors and merge.
 */
import type { LedgerPool } from '../workers/pool.js';
import { keySpecs, type KeySet } from './keyset.js';
import type { AuditRecord } from './record.js';
import { verifyChunk, type ChainAnchor, type ChunkReport, type DeferredLink } from './verify-chunk.js';
import { mergeChunks, type VerifyReport } from './verify.js';

/** How a streamed verification runs. */
export interface StreamVerifyOptions {
  /** the chain's tenant; default the first record's */
  tenant?: string;
  /** seq of the first record; default 1 */
  from?: number;
  /** the record before `from`, when the source has it */
  anchor?: ChainAnchor | null;
  keys: KeySet;
  /** verify every event signature (default true) */
  signatures?: boolean;
  /** records read back from an export (meta without its blind; ChunkContext `metaUnbound`) */
  metaUnbound?: boolean;
  /** records per chunk (default 4096) */
  chunkSize?: number;
  /** verify chunks in these threads; without it, on the calling thread */
  pool?: LedgerPool | null;
}

/** Feeds records in seq order with {@link add}; {@link finish} gives the report. */
export class StreamVerifier {
  readonly #opts: StreamVerifyOptions;
  readonly #chunkSize: number;
  readonly #from: number;
  #tenant: string | undefined;
  #buffer: AuditRecord[] = [];
  #firstSeq: number;
  #anchor: ChainAnchor | null;
  readonly #reports: Array<Promise<ChunkReport>> = [];
  #inFlight = 0;
  #slot: (() => void) | undefined;
  #specs: ReturnType<typeof keySpecs> | undefined;

  constructor(opts: StreamVerifyOptions) {
    this.#opts = opts;
    this.#chunkSize = Math.max(1, opts.chunkSize ?? 4096);
    this.#from = opts.from ?? 1;
    this.#firstSeq = this.#from;
    this.#tenant = opts.tenant;
    this.#anchor = opts.anchor ?? null;
  }

  /** Records taken so far. */
  get count(): number {
    return this.#firstSeq - this.#from + this.#buffer.length;
  }

  /** Takes the next record; resolves when the caller may go on (a pool has room for more work). */
  async add(record: AuditRecord): Promise<void> {
    this.#tenant ??= record.tenant;
    this.#buffer.push(record);
    if (this.#buffer.length >= this.#chunkSize) await this.#flush();
  }

  /** Verifies what is left and merges every chunk report; `head` is the chain head the source claims. */
  async finish(
    head: ChainAnchor | null,
    resolve: (seqs: number[]) => Promise<Map<number, string>> = async () => new Map(),
  ): Promise<VerifyReport> {
    if (this.#buffer.length > 0 || this.#reports.length === 0) await this.#flush();
    const reports = await Promise.all(this.#reports);
    // A checkpoint attesting a record before its own chunk and anchor: that record's hash is fetched
    // again from the source (rare: the service always attests the record right before a checkpoint).
    const wanted = [...new Set(reports.flatMap((r) => r.checkpoints.deferred.map((d: DeferredLink) => d.attested_seq)))];
    // A claimed head hash is compared with the record at its seq (fetched again, like a far checkpoint link).
    if (head !== null && head.hash !== '' && head.seq >= this.#from && head.seq < this.#firstSeq && !wanted.includes(head.seq))
      wanted.push(head.seq);
    const known = wanted.length > 0 ? await resolve(wanted) : new Map<number, string>();
    const anchor = this.#opts.anchor ?? null;
    return mergeChunks(reports, {
      from: this.#from,
      head,
      resolve: (seq) => known.get(seq) ?? (anchor !== null && seq === anchor.seq ? anchor.hash : undefined),
    });
  }

  async #flush(): Promise<void> {
    const records = this.#buffer;
    this.#buffer = [];
    const ctx = {
      tenant: this.#tenant ?? '',
      firstSeq: this.#firstSeq,
      anchor: this.#anchor,
      signatures: this.#opts.signatures ?? true,
      head: null,
      metaUnbound: this.#opts.metaUnbound ?? false,
    };
    // The next chunk's anchor is this chunk's last record as stored, known before it is verified.
    const last = records[records.length - 1];
    if (last !== undefined) this.#anchor = { seq: last.seq, hash: last.hash };
    this.#firstSeq += records.length;
    const pool = this.#opts.pool ?? null;
    if (pool === null) {
      this.#reports.push(Promise.resolve(verifyChunk(records, { ...ctx, keys: this.#opts.keys })));
      return;
    }
    while (this.#inFlight >= pool.threads * 2) await new Promise<void>((r) => (this.#slot = r));
    this.#inFlight++;
    const job = pool.verifyChunk({ records, ...ctx, keys: (this.#specs ??= keySpecs(this.#opts.keys)) }).then((res) => res.report);
    const done = (): void => {
      this.#inFlight--;
      const wake = this.#slot;
      this.#slot = undefined;
      wake?.();
    };
    job.then(done, done);
    this.#reports.push(job);
  }
}
