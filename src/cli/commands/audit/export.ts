import { createHash, randomBytes } from 'node:crypto';
import diagnosticsChannel from 'node:diagnostics_channel';
import { open, rename, unlink } from 'node:fs/promises';
import type { FileHandle } from 'node:fs/promises';
import { basename, dirname, join, resolve } from 'node:path';
import { Writable } from 'node:stream';
import { Option } from 'clipanion';
import { BaseCommand, ClientCommand } from '../../client/base-command.js';
import { CliError, CliUsageError } from '../../client/errors.js';
import { ExitCode } from '../../client/exit-codes.js';

/** What `-o json` prints after a successful export to a file. */
export interface ExportSummary {
  path: string;
  format: string;
  count: number;
  last_seq: number;
  bytes: number;
  sha256: string;
}

/** One progress frame's inputs. */
export interface ProgressState {
  records: number;
  bytes: number;
  elapsedMs: number;
  /** seqs in the export's snapshot range (from the response headers), if known */
  expected?: number;
}

const TEXT_TERMINATOR = /^# export-complete count=(\d+) last_seq=(\d+)$/;

function clock(seconds: number): string {
  const s = Math.max(0, Math.round(seconds));
  const h = Math.floor(s / 3600);
  const m = Math.floor((s % 3600) / 60);
  const ss = String(s % 60).padStart(2, '0');
  return h > 0 ? `${h}:${String(m).padStart(2, '0')}:${ss}` : `${m}:${ss}`;
}

/**
 * One line of the progress bar: records (of the snapshot range when known), MB written, MB/s, ETA.
 * The ETA assumes the rest goes as fast as what came so far; with filters, fewer records than the
 * range may arrive, so the bar is an upper bound and jumps to done at the terminator.
 */
export function renderProgress(p: ProgressState, width = 24): string {
  const mb = p.bytes / (1024 * 1024);
  const secs = p.elapsedMs / 1000;
  const rate = secs > 0 ? mb / secs : 0;
  const speed = `${mb.toFixed(1)} MB  ${rate.toFixed(1)} MB/s`;
  if (p.expected === undefined || p.expected <= 0) return `${p.records.toLocaleString('en-US')} records  ${speed}`;
  const frac = Math.min(1, p.records / p.expected);
  const filled = Math.round(frac * width);
  const recPerSec = secs > 0 ? p.records / secs : 0;
  const eta = recPerSec > 0 ? clock((p.expected - Math.min(p.records, p.expected)) / recPerSec) : '--:--';
  return (
    `[${'#'.repeat(filled)}${'-'.repeat(width - filled)}] ${p.records.toLocaleString('en-US')}/${p.expected.toLocaleString('en-US')} ` +
    `records  ${speed}  ETA ${eta}`
  );
}

/**
 * Reads the terminator line (DECISIONS.md "Audit ledger → Export"): `# export-complete count=N
 * last_seq=S` for text formats, `{"export_complete":true,"count":N,"last_seq":S}` for JSON formats.
 * Returns null when the last line is not one, i.e. the stream was cut.
 */
export function parseTerminator(line: string): { count: number; last_seq: number } | null {
  const m = TEXT_TERMINATOR.exec(line);
  if (m) return { count: Number(m[1]), last_seq: Number(m[2]) };
  if (!line.startsWith('{')) return null;
  try {
    const o = JSON.parse(line) as { export_complete?: unknown; count?: unknown; last_seq?: unknown };
    if (o.export_complete === true && Number.isSafeInteger(o.count) && Number.isSafeInteger(o.last_seq))
      return { count: o.count as number, last_seq: o.last_seq as number };
  } catch {
    // not JSON: not a terminator
  }
  return null;
}

/**
 * The sink of the download: writes each chunk to the destination (a file handle or stdout, with
 * backpressure) while hashing it, counting lines and keeping the tail to find the terminator.
 */
class ExportTap extends Writable {
  readonly hash = createHash('sha256');
  bytes = 0;
  lines = 0;
  tail = Buffer.alloc(0);

  constructor(
    private readonly dest: { file: FileHandle } | { stream: NodeJS.WritableStream },
    private readonly onProgress: () => void,
  ) {
    super({ highWaterMark: 1024 * 1024 });
  }

  override _write(chunk: Buffer, _enc: BufferEncoding, done: (err?: Error | null) => void): void {
    this.hash.update(chunk);
    this.bytes += chunk.length;
    for (let i = chunk.indexOf(0x0a); i >= 0; i = chunk.indexOf(0x0a, i + 1)) this.lines++;
    // The terminator is short; the last 4 KiB always hold it whole.
    this.tail = Buffer.concat([this.tail, chunk.subarray(Math.max(0, chunk.length - 4096))]).subarray(-4096);
    this.onProgress();
    if ('file' in this.dest) {
      writeAll(this.dest.file, chunk).then(() => done(), done);
      return;
    }
    if (this.dest.stream.write(chunk)) done();
    else this.dest.stream.once('drain', () => done());
  }

  /** The last complete line (without its newline), or null when the stream did not end with one. */
  lastLine(): string | null {
    const text = this.tail.toString('utf8');
    if (!text.endsWith('\n')) return null;
    const body = text.slice(0, -1);
    return body.slice(body.lastIndexOf('\n') + 1);
  }
}

/** Response headers of the export request, caught from undici's public diagnostics channel. */
function watchHeaders(pathPrefix: string): { headers(): Map<string, string>; stop(): void } {
  const found = new Map<string, string>();
  const channel = diagnosticsChannel.channel('undici:request:headers');
  const listener = (message: unknown): void => {
    const m = message as { request?: { path?: string }; response?: { headers?: Array<Buffer | string> } };
    if (!m.request?.path?.includes(pathPrefix) || !Array.isArray(m.response?.headers)) return;
    const raw = m.response.headers;
    for (let i = 0; i + 1 < raw.length; i += 2) found.set(String(raw[i]).toLowerCase(), String(raw[i + 1]));
  };
  channel.subscribe(listener);
  return { headers: () => found, stop: () => channel.unsubscribe(listener) };
}

/** `svc audit export`: stream the tenant's audit chain in a SIEM format to stdout or, atomically, to a file. */
export class AuditExportCommand extends ClientCommand {
  static override paths = [['audit', 'export']];

  static override usage = BaseCommand.Usage({
    category: 'Audit',
    description: 'Export the audit chain in a SIEM format (GET /v1/audit/export)',
    details: `
      Streams every record of the tenant's chain (or the \`--from\`/\`--to\` seq range, narrowed by
      the list filters) in the chosen format, one record per line, ending with a terminator line:
      \`# export-complete count=N last_seq=S\` (cef, leef, syslog) or
      \`{"export_complete":true,"count":N,"last_seq":S}\` (otlp, otlp_envelope, otlp_log_record, ocsf).
      Resume an export with \`--from <last_seq + 1>\`.

      With \`--out FILE\` the export is written to a temporary file beside FILE (mode 0600), synced
      and renamed into place only once the terminator arrived and its count matches the lines
      received. A stream that ends without it (server failure, connection cut) exits 6 and leaves no
      file behind. Without \`--out\` the lines go to stdout as they arrive.

      A progress bar (records, MB/s, ETA over the snapshot range) is drawn on stderr when stderr is
      a terminal. With \`-o json\` (which needs \`--out\`) nothing is drawn and one JSON summary is
      printed: path, format, count, last_seq, bytes, sha256.

      See docs/export.md for the formats and how to re-verify an export.
    `,
    examples: [
      ['Export everything as CEF to a file', '$0 audit export --out audit.cef'],
      ['OCSF from seq 1001 on, as a JSON summary', '$0 audit export --format ocsf --from 1001 --out audit.ndjson -o json'],
      ['Only agent actions, to stdout', '$0 audit export --format otlp_log_record --action agent.'],
    ],
  });

  format = Option.String('--format', 'cef', { description: 'cef (default), leef, syslog, otlp, otlp_envelope, otlp_log_record or ocsf' });
  from = Option.String('--from', { description: 'First seq (inclusive); resume with the last_seq of a previous export + 1' });
  to = Option.String('--to', { description: 'Last seq (inclusive); default: the head of the chain when the export starts' });
  action = Option.String('--action', { description: 'Only records whose action starts with this prefix (e.g. agent.)' });
  actor = Option.String('--actor', { description: 'Only records of this actor (e.g. user:<id>)' });
  targetKind = Option.String('--target-kind', { description: 'Only records with this target kind' });
  targetId = Option.String('--target-id', { description: 'Only records with this target id' });
  since = Option.String('--since', { description: 'Only records that occurred at or after this RFC 3339 instant (9 fractional digits)' });
  until = Option.String('--until', { description: 'Only records that occurred before this RFC 3339 instant (9 fractional digits)' });
  out = Option.String('--out', { description: 'Write to this file atomically (temp file + fsync + rename, mode 0600); default: stdout' });

  async execute(): Promise<number> {
    const toFile = this.out !== undefined && this.out !== '-';
    if (this.json && !toFile) throw new CliUsageError('-o json needs --out FILE: stdout carries the export itself');
    for (const [flag, value] of [['--from', this.from], ['--to', this.to]] as const) {
      if (value !== undefined && !/^\d+$/.test(value))
        throw new CliUsageError(`${flag} must be a non-negative integer, got ${JSON.stringify(value)}`);
    }
    const query = {
      format: this.format,
      from: this.from,
      to: this.to,
      action: this.action,
      actor: this.actor,
      target_kind: this.targetKind,
      target_id: this.targetId,
      since: this.since,
      until: this.until,
    };
    const target = toFile ? resolve(this.out as string) : undefined;
    const temp = target ? join(dirname(target), `.${basename(target)}.${randomBytes(6).toString('hex')}.part`) : undefined;
    const file = temp ? await open(temp, 'wx', 0o600) : undefined;
    const stderr = this.context.stderr as NodeJS.WriteStream;
    const showProgress = !this.json && stderr.isTTY === true;
    const started = Date.now();
    const watch = watchHeaders('/v1/audit/export');
    let lastDraw = 0;
    let drawn = false;
    let tap: ExportTap | undefined;
    const draw = (force = false): void => {
      if (!showProgress || tap === undefined) return;
      const now = Date.now();
      if (!force && now - lastDraw < 100) return;
      lastDraw = now;
      const h = watch.headers();
      const from = Number(h.get('x-export-from-seq'));
      const to = Number(h.get('x-export-to-seq'));
      const p: ProgressState = { records: tap.lines, bytes: tap.bytes, elapsedMs: now - started };
      if (Number.isSafeInteger(from) && Number.isSafeInteger(to) && h.has('x-export-to-seq')) p.expected = Math.max(0, to - from + 1);
      stderr.write(`\r${renderProgress(p)}\x1b[K`);
      drawn = true;
    };
    tap = new ExportTap(file ? { file } : { stream: this.context.stdout }, () => draw());
    let renamed = false;
    try {
      await this.withClient((client) => client.download('/v1/audit/export', tap as ExportTap, { query }));
      const end = tap.lastLine();
      const term = end === null ? null : parseTerminator(end);
      if (term === null) {
        throw new CliError(
          ExitCode.Server,
          'export_incomplete',
          `the export stream ended after ${tap.bytes} bytes without its terminator line; nothing was ` +
            `kept${target ? '' : ' (stdout holds a partial export)'}`,
        );
      }
      if (term.count !== tap.lines - 1) {
        throw new CliError(
          ExitCode.Server,
          'export_incomplete',
          `the terminator counts ${term.count} records but ${tap.lines - 1} lines arrived`,
        );
      }
      if (showProgress) {
        draw(true);
        stderr.write('\n');
        drawn = false;
      }
      if (file && temp && target) {
        // Durable before visible: the data is fsynced, then the rename publishes it whole.
        await file.sync();
        await file.close();
        await rename(temp, target);
        renamed = true;
        await syncDir(dirname(target));
      }
      const summary: ExportSummary = {
        path: target ?? '-',
        format: this.format,
        count: term.count,
        last_seq: term.last_seq,
        bytes: tap.bytes,
        sha256: tap.hash.digest('hex'),
      };
      if (this.json) this.emit(summary, () => '');
      else {
        const line =
          `exported ${summary.count} records (${summary.bytes} bytes, last_seq ${summary.last_seq}) to ${target ?? 'stdout'}; sha256 ` +
          `${summary.sha256}\n`;
        // stdout may be the export itself: the human summary goes to stderr then.
        (target ? this.context.stdout : stderr).write(line);
      }
      return ExitCode.OK;
    } finally {
      watch.stop();
      // A bar left mid-line by a failure gets its newline before the error line.
      if (drawn) stderr.write('\n');
      if (file && !renamed) {
        await file.close().catch(() => undefined);
        if (temp) await unlink(temp).catch(() => undefined);
      }
    }
  }
}

/** Writes the whole chunk: a file write may be short (disk nearly full, signals), so loop until done. */
async function writeAll(file: FileHandle, chunk: Buffer): Promise<void> {
  for (let off = 0; off < chunk.length; ) {
    const { bytesWritten } = await file.write(chunk, off, chunk.length - off);
    if (bytesWritten <= 0) throw new Error('short write to the export file');
    off += bytesWritten;
  }
}

/** fsync of a directory so the rename itself survives a crash (best effort: not every FS allows it). */
async function syncDir(dir: string): Promise<void> {
  let h: FileHandle | undefined;
  try {
    h = await open(dir, 'r');
    await h.sync();
  } catch {
    // e.g. EISDIR/EINVAL on some file systems; the data itself is already synced
  } finally {
    await h?.close().catch(() => undefined);
  }
}
