/** Shared pieces of `svc hookpep …`: reading the policy document and a hook input, and renderings. */
import { readFile } from 'node:fs/promises';
import type { Readable } from 'node:stream';
import { Option } from 'clipanion';
import { CliUsageError } from '../../client/errors.js';
import { fields, table } from '../auth/support.js';

export const PDP = '/v1/m/governance/pdp';

export type RevisionView = {
  surface: string;
  revision: number;
  note: string;
  sha256: string;
  key_fingerprint: string;
  created_by: string;
  created_at: string;
  active: boolean;
  content?: string;
  signature?: string;
};
export type EvalView = { decision: string; reason: string; policies: string[]; errors: string[]; revision: number | null };

export const surfaceOption = (): string | undefined => Option.String('--surface', { description: 'Policy surface (default hooks)' });

/** A file's text, or stdin's with `-`. */
export async function readText(path: string, stdin: Readable): Promise<string> {
  if (path !== '-') return readFile(path, 'utf8');
  const chunks: Buffer[] = [];
  for await (const c of stdin) chunks.push(typeof c === 'string' ? Buffer.from(c) : (c as Buffer));
  return Buffer.concat(chunks).toString('utf8');
}

/** The hook input of dry-run and explain: `--input` JSON (file or -) or `--tool` and `--command`. */
export async function hookInput(
  o: { input?: string; tool?: string; command?: string; event?: string },
  stdin: Readable,
): Promise<Record<string, unknown>> {
  if (o.input) {
    try {
      const v = JSON.parse(await readText(o.input, stdin)) as Record<string, unknown>;
      return { hook_event_name: v['hook_event_name'] ?? 'PreToolUse', tool_name: v['tool_name'], tool_input: v['tool_input'] ?? {} };
    } catch (err) {
      throw new CliUsageError(`--input is not hook JSON: ${(err as Error).message}`);
    }
  }
  if (!o.tool) throw new CliUsageError('give --input <file|-> or --tool');
  return { hook_event_name: o.event ?? 'PreToolUse', tool_name: o.tool, tool_input: o.command ? { command: o.command } : {} };
}

export function revisionTable(items: RevisionView[]): string {
  return table(items, [
    ['revision', (r) => r.revision],
    ['active', (r) => r.active],
    ['sha256', (r) => r.sha256.slice(0, 16)],
    ['key', (r) => r.key_fingerprint.slice(0, 16)],
    ['by', (r) => r.created_by],
    ['at', (r) => r.created_at],
    ['note', (r) => r.note],
  ]);
}

export function revisionFields(r: RevisionView): string {
  const { content: _c, signature: _s, ...rest } = r;
  return fields(rest);
}

export function evalText(e: EvalView): string {
  return fields({
    decision: e.decision,
    reason: e.reason,
    policies: e.policies,
    revision: e.revision ?? 'candidate',
    ...(e.errors.length ? { errors: e.errors } : {}),
  });
}
