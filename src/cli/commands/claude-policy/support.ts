/** Shared pieces of `svc claude-policy …`: the surface flag, the shapes and their renderings. */
import { Option } from 'clipanion';
import { fields, table } from '../auth/support.js';

export const CP = '/v1/m/claude-policy';

export type CpRevisionView = {
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
export type CpValidation = {
  surface: string;
  valid: boolean;
  errors: string[];
  warnings: string[];
  credentials: Array<{ path: string; reason: string }>;
  sha256: string | null;
};

export const surfaceOption = (): string =>
  Option.String('--surface', 'managed-settings', { description: 'managed-settings (default), hooks, managed-mcp or sandbox' });

export function validationText(
  v: CpValidation & { changes?: Array<{ path: string; change: string }>; published_revision?: number | null; unchanged?: boolean },
): string {
  const out: Record<string, unknown> = { surface: v.surface, valid: v.valid, sha256: v.sha256 ?? '-' };
  if (v.published_revision !== undefined) out['published_revision'] = v.published_revision ?? '(none)';
  if (v.unchanged !== undefined) out['unchanged'] = v.unchanged;
  let text = fields(out);
  if (v.errors.length) text += `\nerrors:\n${v.errors.map((e) => `  - ${e}`).join('\n')}`;
  if (v.warnings.length) text += `\nwarnings:\n${v.warnings.map((e) => `  - ${e}`).join('\n')}`;
  if (v.changes?.length) text += `\nchanges:\n${v.changes.map((c) => `  ${c.change.padEnd(8)} ${c.path}`).join('\n')}`;
  return text;
}

export function cpRevisionTable(items: CpRevisionView[]): string {
  return table(items, [
    ['revision', (r) => r.revision],
    ['published', (r) => r.active],
    ['sha256', (r) => r.sha256.slice(0, 16)],
    ['key', (r) => r.key_fingerprint.slice(0, 16)],
    ['by', (r) => r.created_by],
    ['at', (r) => r.created_at],
    ['note', (r) => r.note],
  ]);
}

export function cpRevisionFields(r: CpRevisionView): string {
  const { content: _c, signature: _s, ...rest } = r;
  return fields(rest);
}
