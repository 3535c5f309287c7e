/**
 * Redaction of a person's identifiers (e-mail, name…) from free-text columns, for erasure cascades
 * (docs/compliance.md "What is and is not erased"). Every occurrence of a needle is replaced by
 * `[erased]`, matched with ASCII-only case folding (A–Z ↔ a–z; never Unicode lowercasing, which
 * would also match look-alikes such as the Kelvin sign). The same code runs on both stores: the
 * SQL below only narrows the rows (a superset: `lower()` of either engine keeps every exact and
 * ASCII-folded match), the replacement is decided here.
 */
import { sql, type Transaction } from 'kysely';
import type { Database } from './schema.js';

export const REDACTED = '[erased]';

/** One table's free-text columns, the key of its rows, and what must change with a redaction. */
export interface RedactSpec {
  table: keyof Database & string;
  /** the columns that identify a row (the primary or a unique key) */
  key: readonly string[];
  /** free-text columns (plain text or JSON text) */
  columns: readonly string[];
  /** columns under a unique index: their replacement carries the row's key so two rows stay distinct */
  unique?: readonly string[];
  /** an optimistic-concurrency counter bumped with the change */
  version?: string;
  /** a timestamp column set to `now` with the change */
  updatedAt?: string;
  /** rows to consider, e.g. `{ user_id: … }` for a global table; the tenant binding confines tenant tables */
  where?: Readonly<Record<string, string>>;
}

/** `s` as a regular expression matching itself with ASCII-only case folding. */
function asciiFolded(s: string): string {
  let out = '';
  for (const ch of s) {
    if (/[A-Za-z]/.test(ch)) out += `[${ch.toLowerCase()}${ch.toUpperCase()}]`;
    else out += ch.replace(/[.*+?^${}()|[\]\\/-]/g, '\\$&');
  }
  return out;
}

/** The needles as stored text may carry them: as typed, and escaped inside a JSON string. */
function forms(needles: readonly string[]): string[] {
  const all = new Set<string>();
  for (const n of needles) {
    all.add(n);
    all.add(JSON.stringify(n).slice(1, -1));
  }
  // Longest first, so a needle inside another (a name inside an e-mail) does not split it.
  return [...all].sort((a, b) => b.length - a.length);
}

/** A matcher for `needles`, or null when there is nothing to match. */
export function redactor(needles: readonly string[]): ((text: string) => string) | null {
  const list = forms(needles.filter((n) => n.length > 0));
  if (list.length === 0) return null;
  const re = new RegExp(list.map(asciiFolded).join('|'), 'g');
  return (text) => text.replace(re, REDACTED);
}

function likePattern(needle: string): string {
  return `%${needle.toLowerCase().replace(/[!%_]/g, '!$&')}%`;
}

/**
 * Redacts `needles` from `spec`'s columns in every row the transaction sees (a tenant transaction:
 * the tenant's rows). Returns the number of rows changed.
 */
export async function redactRows(tx: Transaction<Database>, spec: RedactSpec, needles: readonly string[], now: string): Promise<number> {
  const redact = redactor(needles);
  if (redact === null) return 0;
  const pats = forms(needles).map(likePattern);
  const any = sql.join(
    spec.columns.flatMap((c) => pats.map((p) => sql`lower(cast(${sql.ref(c)} as text)) like ${p} escape '!'`)),
    sql` or `,
  );
  const filters = Object.entries(spec.where ?? {}).map(([c, v]) => sql`${sql.ref(c)} = ${v}`);
  const where = filters.length > 0 ? sql`(${any}) and ${sql.join(filters, sql` and `)}` : any;
  const cols = [...new Set([...spec.key, ...spec.columns])];
  const picked = sql.join(cols.map((c) => sql.ref(c)));
  const rows = await sql<Record<string, unknown>>`select ${picked} from ${sql.table(spec.table)} where ${where}`.execute(tx);
  let changed = 0;
  for (const row of rows.rows) {
    const sets: ReturnType<typeof sql>[] = [];
    for (const c of spec.columns) {
      const v = row[c];
      if (typeof v !== 'string') continue;
      let next = redact(v);
      if (next === v) continue;
      if (spec.unique?.includes(c)) next = `${next} ${spec.key.map((k) => String(row[k])).join('/')}`;
      sets.push(sql`${sql.ref(c)} = ${next}`);
    }
    if (sets.length === 0) continue;
    if (spec.version) sets.push(sql`${sql.ref(spec.version)} = ${sql.ref(spec.version)} + 1`);
    if (spec.updatedAt) sets.push(sql`${sql.ref(spec.updatedAt)} = ${now}`);
    const byKey = sql.join(
      spec.key.map((k) => sql`${sql.ref(k)} = ${row[k] as string}`),
      sql` and `,
    );
    await sql`update ${sql.table(spec.table)} set ${sql.join(sets)} where ${byKey}`.execute(tx);
    changed++;
  }
  return changed;
}
