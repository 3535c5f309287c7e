import { createReadStream } from 'node:fs';
import { availableParallelism } from 'node:os';
import { createInterface } from 'node:readline';
import { Option } from 'clipanion';
import * as t from 'typanion';
import { BaseCommand, ClientCommand } from '../../client/base-command.js';
import { CliError, CliUsageError } from '../../client/errors.js';
import { ExitCode } from '../../client/exit-codes.js';
import type { HttpClient } from '../../client/http-client.js';
import { FILE_FORMATS, type FileFormat } from '../../../encoders/decode/formats.js';
import { keySet, type KeyEntry } from '../../../ledger/keyset.js';
import type { AuditRecord } from '../../../ledger/record.js';
import { isSignatureAlgorithm, parsePinnedKey, type SignatureAlgorithm } from '../../../ledger/signers.js';
import type { ChainAnchor, VerifyReport } from '../../../ledger/verify.js';
import type { StreamVerifier } from '../../../ledger/verify-stream.js';

const PAGE = 1000;

/** What a source says about the chain besides its records. */
interface SourceEnd {
  /** head seq the source claims; beyond the last record means a truncated tail */
  headSeq: number | null;
  /** hash the source claims for record headSeq (the server's heads table); '' when unknown */
  headHash?: string;
  /** hashes of earlier records by seq, fetched again for far-reaching checkpoints */
  resolve: (seqs: number[]) => Promise<Map<number, string>>;
  /** an export file without its terminator: the tail cannot be checked */
  unterminated?: boolean;
  /** records came after the terminator line (it must be the file's last line) */
  afterTerminator?: boolean;
  /** the file's format */
  format?: FileFormat;
}

/**
 * `svc audit verify`: checks a chain with public keys the auditor pinned, never with keys or
 * verdicts the server supplies (docs/audit-verification.md). Records come from `GET /v1/audit`
 * pages (`/v1/audit/system` with `--system`) or from a file: an export in any ledger format, or
 * records as served (NDJSON). They are verified as they arrive, in chunks spread over worker
 * threads, so a chain of millions of records needs neither its size in memory nor a second read.
 */
export class AuditVerifyCommand extends ClientCommand {
  static override paths = [['audit', 'verify']];

  static override usage = BaseCommand.Usage({
    category: 'Audit',
    description: 'Verify an audit chain independently of the server, against pinned public keys',
    details: `
      Fetches the tenant's chain (\`GET /v1/audit\` pages, or the system chain with \`--system\`) or reads
      \`--file\` (\`-\` for stdin): an export written by \`svc audit export\` or received by a SIEM, in any
      ledger format (cef, leef, syslog, otlp, otlp_envelope, otlp_log_record, ocsf; recognised from the
      first line, or named with \`--format\`), or NDJSON records as \`GET /v1/audit\` serves them
      (\`--format records\`). Checks seq continuity, links, hashes, the head (the server's \`head_seq\` and \`head_hash\`,
      or the export's \`export-complete\` line), checkpoints and every event signature with the keys
      given by \`--pubkey\` (repeatable): \`<alg>:<base64>\`, or a bare base64/PEM key of \`--pubkey-alg\`
      (default ed25519). Algorithms: ed25519, ecdsa-p256-sha256, ecdsa-p384-sha384, rsa-pkcs1-sha256,
      rsa-pss-sha256. A key vouches only for its own run of records (a key that signs again after
      another key took over is \`key-out-of-range\`); against a server, the pinned keys are also
      narrowed to the seq ranges \`GET /v1/audit/pubkey\` publishes for them.

      Exports carry each record's meta commitment but not the blind behind it: from an export the
      hashes, links, checkpoints and signatures are all verified, the meta text itself is not (it is
      from records as served). A file is complete only when its last line is the \`export-complete\`
      line; without it the file may be cut short and its tail cannot be checked: a warning says so and
      the report has \`complete: false\` (\`true\` otherwise, and always for records from the server).

      Prints the verify report. Exit 0 with the report whatever it says, unless \`--strict\`: then 7
      when chain, checkpoint or signature integrity fails, and 8 (indeterminate) when what is there
      verifies but the file cannot be shown complete. Exit 8 when no verdict is possible (a record or
      checkpoint signed by a key that was not supplied), with or without \`--strict\`.
    `,
    examples: [
      ['Verify a tenant chain', '$0 audit verify --tenant 0197… --pubkey ed25519:MCowBQYDK2VwAyEA… --strict'],
      ['Verify an export file offline', '$0 audit verify --file audit.cef --pubkey "$(cat key.b64)" --strict'],
      ['Verify what a SIEM received, from stdin', 'zcat audit.ocsf.gz | $0 audit verify --file - --pubkey ed25519:… --strict'],
    ],
  });

  pubkey = Option.Array('--pubkey', [], { description: 'Trusted public key, <alg>:<base64> or bare (repeatable)' });
  pubkeyAlg = Option.String('--pubkey-alg', 'ed25519', { description: 'Algorithm of a bare --pubkey (default ed25519)' });
  from = Option.String('--from', {
    description: 'First seq to verify (default 1)',
    validator: t.cascade(t.isNumber(), [t.isInteger(), t.isInInclusiveRange(1, Number.MAX_SAFE_INTEGER)]),
  });
  strict = Option.Boolean('--strict', false, { description: 'Exit 7 when integrity fails' });
  file = Option.String('--file', { description: 'Read the chain from this export or NDJSON file (- for stdin) instead of the server' });
  format = Option.String('--format', {
    description: `Format of --file: ${FILE_FORMATS.join(', ')} (default: recognised from the first line)`,
  });
  threads = Option.String('--threads', {
    description: 'Worker threads verifying signatures (default: the cores, at most 4; 0 = this thread)',
    validator: t.cascade(t.isNumber(), [t.isInteger(), t.isInInclusiveRange(0, 64)]),
  });
  system = Option.Boolean('--system', false, { description: 'Verify the system chain (GET /v1/audit/system; superadmin)' });

  async execute(): Promise<number> {
    if (!isSignatureAlgorithm(this.pubkeyAlg)) throw new CliUsageError(`--pubkey-alg: unknown algorithm ${JSON.stringify(this.pubkeyAlg)}`);
    if (this.pubkey.length === 0)
      throw new CliUsageError('give at least one --pubkey: the keys must come from you, not from the server being audited');
    if (this.format !== undefined && !(FILE_FORMATS as readonly string[]).includes(this.format))
      throw new CliUsageError(`--format must be one of ${FILE_FORMATS.join(', ')}`);
    if (this.format !== undefined && this.file === undefined)
      throw new CliUsageError('--format describes --file; records from the server need no format');
    const alg = this.pubkeyAlg as SignatureAlgorithm;
    const verifiers = this.pubkey.map((spec) => {
      try {
        return parsePinnedKey(spec.trim(), alg);
      } catch (err) {
        throw new CliUsageError(`--pubkey ${JSON.stringify(spec.slice(0, 24))}…: ${(err as Error).message}`);
      }
    });
    // Loaded on demand, so other commands do not pay for worker threads and decoders at start.
    const [{ StreamVerifier }, { createWorkerPool }] = await Promise.all([
      import('../../../ledger/verify-stream.js'),
      import('../../../workers/pool.js'),
    ]);
    const threads = this.threads ?? Math.min(4, availableParallelism());
    const pool = threads > 0 ? createWorkerPool({ threads }) : null;
    try {
      const from = this.from ?? 1;
      const keys = keySet(verifiers);
      const make = (anchor: ChainAnchor | null, metaUnbound: boolean): StreamVerifier =>
        new StreamVerifier({ ...(this.tenant === undefined ? {} : { tenant: this.tenant }), from, anchor, keys, metaUnbound, pool });
      let report: VerifyReport;
      // Whether the source shows it is whole: an export file only with its export-complete line last.
      let complete = true;
      if (this.file !== undefined) {
        const { verifier, end } = await this.readFile(this.file, from, make);
        report = await verifier.finish(headAfter(end, from + verifier.count - 1), end.resolve);
        complete = end.unterminated !== true;
        if (!complete)
          this.context.stderr.write(
            `svc: warning: ${this.file} has no export-complete ` +
              `line${end.afterTerminator ? ' as its last line (records follow it)' : ''}; it may be cut short, and its tail cannot be ` +
              `checked\n`,
          );
      } else {
        report = await this.withClient(async (client) => {
          if (!this.system) await narrowToPublishedRanges(client, keys);
          let verifier: StreamVerifier | undefined;
          const end = await this.fetchRecords(
            client,
            from,
            (anchor) => (verifier = make(anchor, false)),
            (r) => (verifier as StreamVerifier).add(r),
          );
          const v = verifier ?? make(null, false);
          return v.finish(headAfter(end, from + v.count - 1), end.resolve);
        });
      }
      this.emit({ ...report, complete }, renderReport);
      if (report.signatures.reason === 'unknown-key' || report.checkpoints.reason === 'unknown-key') {
        this.context.stderr.write('svc: indeterminate: a record is signed by a key that was not supplied with --pubkey\n');
        return ExitCode.Indeterminate;
      }
      if (this.strict && !report.ok) return ExitCode.Degraded;
      // What is there verified, but the file cannot be shown whole: no verdict on the chain (issue 30 item 3).
      if (this.strict && !complete) {
        this.context.stderr.write('svc: indeterminate: the export cannot be shown complete (no export-complete line at its end)\n');
        return ExitCode.Indeterminate;
      }
      return ExitCode.OK;
    } finally {
      await pool?.close();
    }
  }

  /** Pages of the chain from one record before `from` (it anchors the first link); `start` is called once with that anchor. */
  private async fetchRecords(
    client: HttpClient,
    from: number,
    start: (anchor: ChainAnchor | null) => void,
    add: (r: AuditRecord) => Promise<void>,
  ): Promise<SourceEnd> {
    const path = this.system ? '/v1/audit/system' : '/v1/audit';
    type Page = { items: AuditRecord[]; has_more: boolean; head_seq?: unknown; head_hash?: unknown };
    const page = async (cursor: number, limit: number): Promise<Page> => {
      const res = await client.get(`${path}?from=${cursor}&limit=${limit}`);
      const body = res.body as { items?: unknown; has_more?: unknown; head_seq?: unknown };
      if (!Array.isArray(body.items) || typeof body.has_more !== 'boolean')
        throw new CliError(ExitCode.Server, 'bad_response', `${path} did not answer a page of records`);
      return body as Page;
    };
    let headSeq: number | null = null;
    let headHash = '';
    let started = false;
    let cursor = Math.max(1, from - 1);
    for (;;) {
      const p = await page(cursor, PAGE);
      if (typeof p.head_seq === 'number') {
        headSeq = p.head_seq;
        // The head the server holds (seq and hash): the record at that seq must carry that hash.
        headHash = typeof p.head_hash === 'string' ? p.head_hash : '';
      }
      for (const r of p.items) {
        if (!started) {
          started = true;
          if (from > 1 && r.seq === from - 1) {
            start({ seq: r.seq, hash: r.hash });
            continue;
          }
          start(null);
        }
        await add(r);
      }
      const last = p.items[p.items.length - 1];
      if (!p.has_more || last === undefined) break;
      cursor = last.seq + 1;
    }
    if (!started) start(null);
    const resolve = async (seqs: number[]): Promise<Map<number, string>> => {
      const out = new Map<number, string>();
      for (const seq of seqs) {
        const r = (await page(seq, 1)).items[0];
        if (r?.seq === seq && typeof r.hash === 'string') out.set(seq, r.hash);
      }
      return out;
    };
    return { headSeq, headHash, resolve };
  }

  /** Streams a file line by line into a verifier; records before `from` only anchor. */
  private async readFile(
    file: string,
    from: number,
    make: (anchor: ChainAnchor | null, metaUnbound: boolean) => StreamVerifier,
  ): Promise<{ verifier: StreamVerifier; end: SourceEnd }> {
    const { ExportDecodeError, decodeLine, detectFormat } = await import('../../../encoders/decode/index.js');
    let format = this.format as FileFormat | undefined;
    let verifier: StreamVerifier | undefined;
    let anchor: ChainAnchor | null = null;
    let headSeq: number | null = null;
    let terminated = false;
    let afterTerminator = false;
    const pending = new Set<number>();
    const found = new Map<number, string>();
    const pass = async (visit: (record: AuditRecord) => Promise<void>): Promise<void> => {
      let n = 0;
      for await (const line of this.lines(file)) {
        n++;
        if (format === undefined) {
          if (line.trim() === '' || line.startsWith('#')) continue;
          const detected = detectFormat(line);
          if (detected === null)
            throw new CliError(
              ExitCode.Err,
              'bad_input',
              `--file ${file}: line ${n} is not a record of any ledger export format (${FILE_FORMATS.join(', ')})`,
            );
          format = detected;
        }
        let decoded;
        try {
          decoded = decodeLine(format, line);
        } catch (err) {
          if (err instanceof ExportDecodeError)
            throw new CliError(ExitCode.Err, 'bad_input', `--file ${file}: line ${n} is not a ${format} ledger record: ${err.message}`);
          throw err;
        }
        if (decoded.kind === 'terminator') {
          // The export's last line: the last seq the server meant to send.
          headSeq = decoded.lastSeq;
          terminated = true;
        } else if (decoded.kind === 'record') {
          if (terminated) {
            // The terminator must be the last line: a file with records after it is not shown complete.
            terminated = false;
            afterTerminator = true;
          }
          await visit(decoded.record);
        }
      }
    };
    await pass(async (r) => {
      // Records before `from` are context only; the one right before it anchors the first link.
      if (typeof r.seq === 'number' && r.seq < from) {
        if (r.seq === from - 1 && typeof r.hash === 'string') anchor = { seq: r.seq, hash: r.hash };
        return;
      }
      verifier ??= make(anchor, format !== 'records');
      await verifier.add(r);
    });
    verifier ??= make(anchor, format !== 'records');
    const canReread = file !== '-';
    const resolve = async (seqs: number[]): Promise<Map<number, string>> => {
      if (!canReread) return found;
      for (const s of seqs) pending.add(s);
      terminated = false;
      await pass(async (r) => {
        if (pending.has(r.seq)) found.set(r.seq, r.hash);
      });
      return found;
    };
    const end: SourceEnd = { headSeq, resolve, unterminated: !terminated, afterTerminator };
    if (format !== undefined) end.format = format;
    return { verifier, end };
  }

  private lines(file: string): AsyncIterable<string> {
    const input = file === '-' ? this.context.stdin : createReadStream(file, { encoding: 'utf8' });
    if (file !== '-') {
      (input as NodeJS.ReadableStream).on('error', () => undefined);
    }
    return readLines(input, file);
  }
}

/**
 * The seq ranges the server publishes for the pinned keys (`GET /v1/audit/pubkey`): a retired key
 * vouches only for records up to its `last_seq`, a newer key only from its `first_seq`. Ranges can
 * only narrow what a pinned key vouches for, never add a key, so a server that lies about them can
 * cause a failure but never hide one. Without the route's answer the chain's own rule still holds:
 * a key signs one run of records (`key-out-of-range`).
 */
async function narrowToPublishedRanges(client: HttpClient, keys: Map<string, KeyEntry>): Promise<void> {
  let published: unknown;
  try {
    published = (await client.get('/v1/audit/pubkey')).body;
  } catch {
    return;
  }
  const list = (published as { keys?: unknown } | null)?.keys;
  if (!Array.isArray(list)) return;
  for (const k of list as Array<{ key_id?: unknown; first_seq?: unknown; last_seq?: unknown }>) {
    const entry = typeof k.key_id === 'string' ? keys.get(k.key_id) : undefined;
    if (entry === undefined) continue;
    if (typeof k.first_seq === 'number') entry.first_seq = Math.max(entry.first_seq ?? 0, k.first_seq);
    if (typeof k.last_seq === 'number') entry.last_seq = Math.min(entry.last_seq ?? Number.MAX_SAFE_INTEGER, k.last_seq);
  }
}

/**
 * The head the source claims: past the last record it is a truncated tail; with a hash (the
 * server's heads table), the record at its seq must carry that hash (`hash-mismatch` otherwise).
 */
function headAfter(end: SourceEnd, lastSeq: number): ChainAnchor | null {
  if (end.headSeq === null) return null;
  if (end.headSeq > lastSeq || (end.headHash ?? '') !== '') return { seq: end.headSeq, hash: end.headHash ?? '' };
  return null;
}

/** Lines of a stream; an unreadable file is a usage error naming it. */
async function* readLines(input: NodeJS.ReadableStream, file: string): AsyncGenerator<string> {
  const rl = createInterface({ input, crlfDelay: Infinity });
  try {
    for await (const line of rl) yield line;
  } catch (err) {
    throw new CliUsageError(`--file ${file}: ${(err as Error).message}`);
  } finally {
    rl.close();
  }
}

function renderReport(r: VerifyReport & { complete: boolean }): string {
  const s = (ok: boolean): string => (ok ? 'ok' : 'FAILED');
  return [
    `verdict:     ${r.ok ? 'ok' : 'NOT OK'}`,
    `chain:       ${s(r.chain.ok)}, ${r.chain.checked} ` +
      `checked${r.chain.reason ? `, ${r.chain.reason}${r.chain.break_at !== null ? ` at seq ${r.chain.break_at}` : ''}` : ''}`,
    `checkpoints: ${r.checkpoints.status}, ${r.checkpoints.count} found` +
      (r.checkpoints.latest_attested_seq !== null ? `, latest attests seq ${r.checkpoints.latest_attested_seq}` : '') +
      (r.checkpoints.reason
        ? `, ${r.checkpoints.reason}${r.checkpoints.first_bad_seq !== null ? ` at seq ${r.checkpoints.first_bad_seq}` : ''}`
        : ''),
    `signatures:  ${s(r.signatures.ok)}, ${r.signatures.checked} ` +
      `checked${r.signatures.reason ? `, ${r.signatures.reason} at seq ${r.signatures.first_bad_seq}` : ''}`,
    `complete:    ${r.complete ? 'yes' : 'NO (no export-complete line at the end: the file may be cut short)'}`,
  ].join('\n');
}
