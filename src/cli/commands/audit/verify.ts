import { readFile } from 'node:fs/promises';
import { Option } from 'clipanion';
import * as t from 'typanion';
import { BaseCommand, ClientCommand } from '../../client/base-command.js';
import { CliError, CliUsageError } from '../../client/errors.js';
import { ExitCode } from '../../client/exit-codes.js';
import { keySet } from '../../../ledger/keyset.js';
import type { AuditRecord } from '../../../ledger/record.js';
import { isSignatureAlgorithm, parsePinnedKey, type SignatureAlgorithm } from '../../../ledger/signers.js';
import { verifyRecords, type ChainAnchor, type VerifyReport } from '../../../ledger/verify.js';

/** Records to verify and what the source says about the chain's head. */
interface Fetched {
  records: AuditRecord[];
  /** the record before `from` (its link anchors the first one), when the source had it */
  anchor: ChainAnchor | null;
  /** head seq the source claims; beyond the last record means a truncated tail */
  headSeq: number | null;
}

const PAGE = 1000;

/**
 * `svc audit verify`: checks a chain with public keys the auditor pinned, never with keys or
 * verdicts the server supplies (docs/audit-verification.md). Records come from `GET /v1/audit`
 * pages (`/v1/audit/system` with `--system`) or from a file of records as served (`--file`, NDJSON).
 */
export class AuditVerifyCommand extends ClientCommand {
  static override paths = [['audit', 'verify']];

  static override usage = BaseCommand.Usage({
    category: 'Audit',
    description: 'Verify an audit chain independently of the server, against pinned public keys',
    details: `
      Fetches the tenant's chain (\`GET /v1/audit\` pages, or the system chain with \`--system\`) or reads
      \`--file\` (NDJSON, one record per line as \`GET /v1/audit\` serves them; \`-\` for stdin), and
      checks seq continuity, links, hashes, the head, checkpoints and every event signature with the
      keys given by \`--pubkey\` (repeatable): \`<alg>:<base64>\`, or a bare base64/PEM key of
      \`--pubkey-alg\` (default ed25519). Algorithms: ed25519, ecdsa-p256-sha256, ecdsa-p384-sha384,
      rsa-pkcs1-sha256, rsa-pss-sha256.

      Prints the verify report. Exit 0 with the report whatever it says, unless \`--strict\`: then 7
      when chain, checkpoint or signature integrity fails. Exit 8 when no verdict is possible (a
      record or checkpoint signed by a key that was not supplied), with or without \`--strict\`.
    `,
    examples: [
      ['Verify a tenant chain', '$0 audit verify --tenant 0197… --pubkey ed25519:MCowBQYDK2VwAyEA… --strict'],
      ['Verify an export file offline', '$0 audit verify --file chain.ndjson --pubkey "$(cat key.b64)"'],
    ],
  });

  pubkey = Option.Array('--pubkey', [], { description: 'Trusted public key, <alg>:<base64> or bare (repeatable)' });
  pubkeyAlg = Option.String('--pubkey-alg', 'ed25519', { description: 'Algorithm of a bare --pubkey (default ed25519)' });
  from = Option.String('--from', { description: 'First seq to verify (default 1)', validator: t.cascade(t.isNumber(), [t.isInteger(), t.isInInclusiveRange(1, Number.MAX_SAFE_INTEGER)]) });
  strict = Option.Boolean('--strict', false, { description: 'Exit 7 when integrity fails' });
  file = Option.String('--file', { description: 'Read records from this NDJSON file (- for stdin) instead of the server' });
  system = Option.Boolean('--system', false, { description: 'Verify the system chain (GET /v1/audit/system; superadmin)' });

  async execute(): Promise<number> {
    if (!isSignatureAlgorithm(this.pubkeyAlg)) throw new CliUsageError(`--pubkey-alg: unknown algorithm ${JSON.stringify(this.pubkeyAlg)}`);
    if (this.pubkey.length === 0) throw new CliUsageError('give at least one --pubkey: the keys must come from you, not from the server being audited');
    const alg = this.pubkeyAlg as SignatureAlgorithm;
    const verifiers = this.pubkey.map((spec) => {
      try {
        return parsePinnedKey(spec.trim(), alg);
      } catch (err) {
        throw new CliUsageError(`--pubkey ${JSON.stringify(spec.slice(0, 24))}…: ${(err as Error).message}`);
      }
    });
    const from = this.from ?? 1;
    const fetched = this.file !== undefined ? await this.readFileRecords(this.file, from) : await this.fetchRecords(from);
    const tenant = this.tenant ?? fetched.records[0]?.tenant;
    const lastSeq = from + fetched.records.length - 1;
    const report = verifyRecords(fetched.records, {
      ...(tenant === undefined ? {} : { tenant }),
      from,
      anchor: fetched.anchor,
      // Only the seq of the claimed head is known here: enough to see a truncated tail.
      head: fetched.headSeq !== null && fetched.headSeq > lastSeq ? { seq: fetched.headSeq, hash: '' } : null,
      keys: keySet(verifiers),
    });
    this.emit(report, renderReport);
    if (report.signatures.reason === 'unknown-key' || report.checkpoints.reason === 'unknown-key') {
      this.context.stderr.write('svc: indeterminate: a record is signed by a key that was not supplied with --pubkey\n');
      return ExitCode.Indeterminate;
    }
    return this.strict && !report.ok ? ExitCode.Degraded : ExitCode.OK;
  }

  private async fetchRecords(from: number): Promise<Fetched> {
    const path = this.system ? '/v1/audit/system' : '/v1/audit';
    return this.withClient(async (client) => {
      const records: AuditRecord[] = [];
      let anchor: ChainAnchor | null = null;
      let headSeq: number | null = null;
      // Start one record early: the record before `from` anchors the first link.
      let cursor = Math.max(1, from - 1);
      for (;;) {
        const res = await client.get(`${path}?from=${cursor}&limit=${PAGE}`);
        const page = res.body as { items?: unknown; has_more?: unknown; head_seq?: unknown };
        if (!Array.isArray(page.items) || typeof page.has_more !== 'boolean') throw new CliError(ExitCode.Server, 'bad_response', `${path} did not answer a page of records`);
        if (typeof page.head_seq === 'number') headSeq = page.head_seq;
        for (const r of page.items as AuditRecord[]) {
          if (from > 1 && anchor === null && records.length === 0 && r.seq === from - 1) anchor = { seq: r.seq, hash: r.hash };
          else records.push(r);
        }
        const last = page.items[page.items.length - 1] as AuditRecord | undefined;
        if (!page.has_more || last === undefined) break;
        cursor = last.seq + 1;
      }
      return { records, anchor, headSeq };
    });
  }

  private async readFileRecords(file: string, from: number): Promise<Fetched> {
    let text: string;
    try {
      text = file === '-' ? await readStream(this.context.stdin) : await readFile(file, 'utf8');
    } catch (err) {
      throw new CliUsageError(`--file ${file}: ${(err as Error).message}`);
    }
    const records: AuditRecord[] = [];
    let anchor: ChainAnchor | null = null;
    let headSeq: number | null = null;
    const lines = text.split('\n');
    for (let i = 0; i < lines.length; i++) {
      const line = (lines[i] as string).trim();
      if (line === '') continue;
      let v: unknown;
      try {
        v = JSON.parse(line);
      } catch {
        throw new CliError(ExitCode.Err, 'bad_input', `--file ${file}: line ${i + 1} is not JSON`);
      }
      if (v === null || typeof v !== 'object' || Array.isArray(v)) throw new CliError(ExitCode.Err, 'bad_input', `--file ${file}: line ${i + 1} is not a record`);
      const o = v as Record<string, unknown>;
      if (o['export_complete'] === true) {
        // The export's terminator: the last seq the server meant to send.
        if (typeof o['last_seq'] === 'number') headSeq = o['last_seq'];
        continue;
      }
      const seq = o['seq'];
      // Records before `from` are context only; the one right before it anchors the first link.
      if (typeof seq === 'number' && seq < from) {
        if (seq === from - 1 && typeof o['hash'] === 'string') anchor = { seq, hash: o['hash'] };
        continue;
      }
      records.push(o as unknown as AuditRecord);
    }
    return { records, anchor, headSeq };
  }
}

async function readStream(stream: NodeJS.ReadableStream): Promise<string> {
  let out = '';
  for await (const chunk of stream) out += typeof chunk === 'string' ? chunk : Buffer.from(chunk as Uint8Array).toString('utf8');
  return out;
}

function renderReport(r: VerifyReport): string {
  const s = (ok: boolean): string => (ok ? 'ok' : 'FAILED');
  return [
    `verdict:     ${r.ok ? 'ok' : 'NOT OK'}`,
    `chain:       ${s(r.chain.ok)}, ${r.chain.checked} checked${r.chain.reason ? `, ${r.chain.reason}${r.chain.break_at !== null ? ` at seq ${r.chain.break_at}` : ''}` : ''}`,
    `checkpoints: ${r.checkpoints.status}, ${r.checkpoints.count} found${r.checkpoints.latest_attested_seq !== null ? `, latest attests seq ${r.checkpoints.latest_attested_seq}` : ''}${r.checkpoints.reason ? `, ${r.checkpoints.reason}${r.checkpoints.first_bad_seq !== null ? ` at seq ${r.checkpoints.first_bad_seq}` : ''}` : ''}`,
    `signatures:  ${s(r.signatures.ok)}, ${r.signatures.checked} checked${r.signatures.reason ? `, ${r.signatures.reason} at seq ${r.signatures.first_bad_seq}` : ''}`,
  ].join('\n');
}
