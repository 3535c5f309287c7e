/**
 * The `erase` cascade on kind `personal_text` (docs/compliance.md): an erasure's execution runs it
 * once, inside its transaction, with the subject's identifiers (its aliases and, for a user, the
 * e-mail the user had). Each area registers one through its manifest for its own free-text
 * columns, so the place that owns a table decides what in it is text a person typed; the
 * compliance module never reads another area's tables.
 */
import type { RecordHookContext, RecordHookDecl } from './record-hooks.js';
import { redactRows, type RedactSpec } from '../store/redact.js';

/** The kind erasure runs its text cascades on. */
export const PERSONAL_TEXT = 'personal_text';

/** What the cascade learns (`ctx.record`) and where it reports what it changed. */
export interface PersonalText {
  /** the strings to redact, each at least the erasure's minimum length */
  strings: readonly string[];
  /** the erased user's id for a `user` subject (global tables are confined to the user's rows), else null */
  user_id: string | null;
  /** when the erasure runs (updated_at of changed rows) */
  now: string;
  /** appended to by each cascade: one entry per table, with the rows changed */
  report: { where: string; count: number }[];
}

export function personalText(ctx: RecordHookContext): PersonalText {
  return ctx.record as unknown as PersonalText;
}

/**
 * A cascade redacting `specs`. SQLite has no row-level security: a tenant table names its tenant in
 * `where`, a global table the rows it may touch (the user's own). The
 * receipt gets one `erased` entry per table, `<table>.<columns>: text redacted`, even when 0.
 */
export function redactionHook(name: string, specs: (p: PersonalText, tenant: string) => readonly RedactSpec[]): RecordHookDecl {
  return {
    action: 'erase',
    kind: PERSONAL_TEXT,
    phase: 'cascade',
    name,
    run: async (ctx) => {
      const p = personalText(ctx);
      for (const spec of specs(p, ctx.tenant)) {
        const count = await redactRows(ctx.tx, spec, p.strings, p.now);
        p.report.push({ where: `${spec.table} (${spec.columns.join(', ')}): identifiers replaced by "[erased]"`, count });
      }
    },
  };
}
