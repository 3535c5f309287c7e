import { randomBytes } from 'node:crypto';
import { open, rename, unlink, type FileHandle } from 'node:fs/promises';
import { basename, dirname, join, resolve } from 'node:path';
import { Writable } from 'node:stream';
import { Option } from 'clipanion';
import { BaseCommand, ClientCommand } from '../../client/base-command.js';
import { CliError, CliUsageError } from '../../client/errors.js';
import { ExitCode } from '../../client/exit-codes.js';
import { filterOptions, filterQuery } from './support.js';

/** What `-o json` prints after an export. */
export interface FindingsExportSummary {
  path: string;
  format: string;
  results: number;
  truncated: boolean;
  refused: number;
  bytes: number;
}

/** Writes each chunk to the file, counting bytes and keeping the tail to check the log closed. */
class FileTap extends Writable {
  bytes = 0;
  tail = '';
  constructor(
    private readonly file: FileHandle,
    private readonly onProgress: () => void,
  ) {
    super({ highWaterMark: 1024 * 1024 });
  }
  override _write(chunk: Buffer, _enc: BufferEncoding, done: (err?: Error | null) => void): void {
    this.bytes += chunk.length;
    this.tail = (this.tail + chunk.subarray(Math.max(0, chunk.length - 64)).toString('utf8')).slice(-64);
    this.onProgress();
    (async () => {
      for (let off = 0; off < chunk.length; ) off += (await this.file.write(chunk, off, chunk.length - off)).bytesWritten;
    })().then(() => done(), done);
  }
}

/** `svc findings export --format sarif --out FILE`: the findings as SARIF 2.1.0, written atomically with mode 0600. */
export class FindingsExportCommand extends ClientCommand {
  static override paths = [['findings', 'export']];

  static override usage = BaseCommand.Usage({
    category: 'Findings',
    description: 'Export findings as SARIF 2.1.0 (GET /v1/m/security/findings/export) to a file, atomically, mode 0600',
    details: `
      Takes the list's filters. The file is written beside FILE under a temporary name (mode 0600),
      synced and renamed into place only once the whole log arrived; a cut stream leaves no file and
      exits 6. The server caps the result count (default 25000); when the cap cut the results the
      summary says \`truncated\` (header X-Service-Truncated). Findings whose rule id is empty or
      whose severity maps to no SARIF level are refused, counted, never written.

      Progress (bytes of the expected result count) is drawn on stderr when it is a terminal. Upload
      the file to a code-scanning tool as it is (docs/findings.md).
    `,
    examples: [
      ['Every open finding', '$0 findings export --format sarif --status open --out findings.sarif'],
      ["svc's detector findings, with a JSON summary", '$0 findings export --source detector --out drift.sarif -o json'],
    ],
  });

  format = Option.String('--format', 'sarif', { description: 'sarif (the only format)' });
  out = Option.String('--out', { required: true, description: 'Write to this file atomically (temp file + fsync + rename, mode 0600)' });
  max = Option.String('--max-results', { description: "Results to emit at most (never above the server's cap)" });
  status = filterOptions().status;
  severity = filterOptions().severity;
  source = filterOptions().source;
  kind = filterOptions().kind;
  rule = filterOptions().rule;
  subjectKind = filterOptions().subjectKind;
  subjectRef = filterOptions().subjectRef;

  async execute(): Promise<number> {
    if (this.format !== 'sarif') throw new CliUsageError(`--format must be sarif, got ${JSON.stringify(this.format)}`);
    if (this.max !== undefined && !/^[1-9]\d{0,8}$/.test(this.max)) throw new CliUsageError('--max-results must be a positive integer');
    const target = resolve(this.out);
    const temp = join(dirname(target), `.${basename(target)}.${randomBytes(6).toString('hex')}.part`);
    const file = await open(temp, 'wx', 0o600);
    const stderr = this.context.stderr as NodeJS.WriteStream;
    const showProgress = !this.json && stderr.isTTY === true;
    let last = 0;
    const tap: FileTap = new FileTap(file, () => {
      if (!showProgress || Date.now() - last < 100) return;
      last = Date.now();
      stderr.write(`\r${(tap.bytes / (1024 * 1024)).toFixed(1)} MB written\x1b[K`);
    });
    let renamed = false;
    try {
      const res = await this.withClient((c) =>
        c.download('/v1/m/security/findings/export', tap, { query: { format: this.format, max_results: this.max, ...filterQuery(this) } }),
      );
      if (showProgress) stderr.write('\n');
      // The log ends with the run's closing brackets; anything else is a cut stream.
      if (!tap.tail.endsWith(']}]}'))
        throw new CliError(
          ExitCode.Server,
          'export_incomplete',
          `the SARIF log ended after ${tap.bytes} bytes without its closing; nothing was kept`,
        );
      await file.sync();
      await file.close();
      await rename(temp, target);
      renamed = true;
      const summary: FindingsExportSummary = {
        path: target,
        format: 'sarif',
        results: Number(res.headers['x-service-result-count'] ?? 0),
        truncated: res.headers['x-service-truncated'] === 'true',
        refused: Number(res.headers['x-service-refused-count'] ?? 0),
        bytes: tap.bytes,
      };
      this.emit(
        summary,
        (s) =>
          `${s.results} results${s.truncated ? ' (truncated at the cap)' : ''}${s.refused ? `, ${s.refused} refused` : ''} → ` +
          `${s.path} (${s.bytes} bytes)`,
      );
      return 0;
    } finally {
      if (!renamed) {
        await file.close().catch(() => undefined);
        await unlink(temp).catch(() => undefined);
      }
    }
  }
}
