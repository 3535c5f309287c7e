/**
 * The ordered page pipeline of `GET /v1/audit/export`: seq ranges are encoded in the worker pool, at
 * most `maxInFlight` at a time, and handed to the writer strictly in seq order, so memory is bounded
 * by (in-flight pages + one page in the socket buffer) whatever the ledger size.
 */
import type { DeviceIdentity } from '../../encoders/encoder.js';
import type { EncodePageRequest, EncodePageResult, ExportFilter, ExportSource } from '../../workers/export-protocol.js';

/** What to export: one chain, a closed seq range fixed before the first page, one format. */
export interface ExportPlan {
  tenant: string;
  format: string;
  /** true for JSON formats (terminator is a JSON object), false for text formats */
  json: boolean;
  filter: ExportFilter;
  /** first seq considered (≥ 1) */
  fromSeq: number;
  /**
   * last seq considered: min(`to`, head_seq at start). Fixing it up front makes the export a
   * consistent prefix of the chain: records appended meanwhile (the export's own audit record
   * included) are not part of it.
   */
  toSeq: number;
}

/** The machinery a run uses. */
export interface ExportRunner {
  /** runs one page job (normally the export pool; `req.buffer`, when set, is transferred) */
  encodePage(req: EncodePageRequest): Promise<EncodePageResult>;
  source: ExportSource;
  device: DeviceIdentity;
  /** seqs per page (default 512: about 0.3–1 MB of output, one socket write each) */
  pageSize?: number;
  /** pages encoding at once (default 4) */
  maxInFlight?: number;
}

/** How a run ended; handed to `onFinish` exactly once. */
export interface ExportOutcome {
  complete: boolean;
  count: number;
  /** the seq through which the export is complete (see {@link terminatorLine}) */
  lastSeq: number;
  bytes: number;
  pagesDispatched: number;
  pagesWritten: number;
  /** the error that ended the run, if any */
  error?: unknown;
}

/** Called once at the end: before the terminator on success (a throw then withholds it), from `finally` otherwise. */
export type FinishHook = (outcome: ExportOutcome) => Promise<void>;

const DEFAULT_PAGE_SIZE = 512;
const DEFAULT_IN_FLIGHT = 4;

/**
 * The last line of every export (DECISIONS.md "Audit ledger → Export"): a JSON object for JSON
 * formats, a `#` comment line for text formats. `last_seq` is the seq through which the export is
 * complete: every record with seq ≤ last_seq that matches the filters is in the stream, so a
 * consumer resumes with `from=last_seq+1`.
 */
export function terminatorLine(json: boolean, count: number, lastSeq: number): string {
  return json
    ? `${JSON.stringify({ export_complete: true, count, last_seq: lastSeq })}\n`
    : `# export-complete count=${count} last_seq=${lastSeq}\n`;
}

/** Splits [fromSeq, toSeq] into page ranges, lazily. */
function* pageRanges(fromSeq: number, toSeq: number, size: number): Generator<[number, number]> {
  for (let a = fromSeq; a <= toSeq; a += size) yield [a, Math.min(a + size - 1, toSeq)];
}

/**
 * The export body as an async iterable of large chunks (one per non-empty page, then the
 * terminator). A chunk is valid until the consumer asks for the next one: its memory is then reused
 * for a later page (copy it if you keep it). Stopping the iteration early (`return()`, as the HTTP adapter does when the client
 * goes away) dispatches no further page; pages already running finish and are dropped.
 */
export async function* exportChunks(
  plan: ExportPlan,
  runner: ExportRunner,
  onFinish: FinishHook,
): AsyncGenerator<Uint8Array, void, undefined> {
  const pageSize = Math.max(1, runner.pageSize ?? DEFAULT_PAGE_SIZE);
  const maxInFlight = Math.max(1, runner.maxInFlight ?? DEFAULT_IN_FLIGHT);
  const ranges = pageRanges(plan.fromSeq, plan.toSeq, pageSize);
  const inFlight: Array<{ job: Promise<EncodePageResult>; toSeq: number }> = [];
  // Output buffers the consumer is done with, handed to the next pages (no allocation per page).
  const spare: ArrayBuffer[] = [];
  const outcome: ExportOutcome = { complete: false, count: 0, lastSeq: plan.fromSeq - 1, bytes: 0, pagesDispatched: 0, pagesWritten: 0 };
  let finished = false;
  const launch = (): void => {
    while (inFlight.length < maxInFlight) {
      const next = ranges.next();
      if (next.done) return;
      const [fromSeq, toSeq] = next.value;
      const req: EncodePageRequest = {
        kind: 'encode-page',
        source: runner.source,
        tenant: plan.tenant,
        fromSeq,
        toSeq,
        format: plan.format,
        device: runner.device,
        filter: plan.filter,
      };
      const buffer = spare.pop();
      if (buffer !== undefined) req.buffer = buffer;
      const job = runner.encodePage(req);
      // A page that fails while an earlier one is awaited must not become an unhandled rejection;
      // its error still surfaces when its turn comes.
      job.catch(() => undefined);
      inFlight.push({ job, toSeq });
      outcome.pagesDispatched++;
    }
  };
  try {
    launch();
    for (let head = inFlight.shift(); head !== undefined; head = inFlight.shift()) {
      const page = await head.job;
      // Counted when handed to the writer: what a client that goes away may have received.
      outcome.count += page.count;
      outcome.pagesWritten++;
      outcome.lastSeq = head.toSeq;
      if (page.length > 0) {
        outcome.bytes += page.length;
        launch();
        yield new Uint8Array(page.bytes, 0, page.length);
      }
      // The consumer asked for more, so it is done with the chunk (the uWS adapter has written or
      // copied it): its buffer goes to the next page.
      spare.push(page.bytes);
      launch();
    }
    // Every page in [fromSeq, toSeq] is written: the export is complete through toSeq.
    outcome.lastSeq = Math.max(plan.fromSeq - 1, plan.toSeq);
    outcome.complete = true;
    finished = true;
    await onFinish({ ...outcome });
    const last = Buffer.from(terminatorLine(plan.json, outcome.count, outcome.lastSeq));
    outcome.bytes += last.byteLength;
    yield last;
  } catch (err) {
    outcome.error = err;
    throw err;
  } finally {
    if (!finished) {
      finished = true;
      await onFinish({ ...outcome, complete: false });
    }
  }
}
