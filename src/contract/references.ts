/**
 * References resolved when written (DECISIONS.md Wave 3): wherever a route takes a name, an external
 * id or an e-mail for a record, the owner of that record turns it into the record's id before
 * anything is stored, so a rule written today still matches the record after a rename and a typo
 * never becomes a rule that matches nothing. One shape for every area (kill switches, holds, and
 * next budgets, pins, grants): unknown → 404 `not_found` naming up to three close names; several
 * records → 409 `ambiguous` listing them; nothing is guessed.
 */
import { ApiError } from './errors.js';

/** A record a reference may denote: its id and how people name it. */
export interface RefCandidate {
  id: string;
  /** what the record is called in messages (a name, an e-mail, a path) */
  label: string;
}

/** How one kind of record is looked up; each area supplies its own over its own tables. */
export interface RefLookup {
  /** the kind, as messages name it: `agent`, `user`, `workspace` */
  kind: string;
  /** what forms a reference may take, for the 404 message: `id, name or external id` */
  forms: string;
  /** the records whose id or name, external id, e-mail… equals `ref` exactly (normalised by the owner) */
  exact(ref: string): Promise<RefCandidate[]>;
  /** every name a reference could have meant (for suggestions only); read only when nothing matched */
  names(): Promise<string[]>;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Whether `text` has the form of an id (a UUID, any case). */
export function isUuidText(text: string): boolean {
  return UUID.test(text);
}

/** Levenshtein distance with two rows; `cap` stops early once every cell of a row exceeds it. */
export function editDistance(a: string, b: string, cap = Infinity): number {
  if (a === b) return 0;
  if (Math.abs(a.length - b.length) > cap) return cap + 1;
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const cur = [i];
    let best = i;
    for (let j = 1; j <= b.length; j++) {
      const v = Math.min((prev[j] as number) + 1, (cur[j - 1] as number) + 1, (prev[j - 1] as number) + (a[i - 1] === b[j - 1] ? 0 : 1));
      cur.push(v);
      if (v < best) best = v;
    }
    if (best > cap) return cap + 1;
    prev = cur;
  }
  return prev[b.length] as number;
}

/**
 * Up to `max` names close to `ref`: within an edit distance of a third of the longer text (at least
 * 2, so one transposed pair counts), or containing it / contained in it case-insensitively; closest
 * first, then alphabetical, so the message is stable.
 */
export function closeNames(ref: string, names: Iterable<string>, max = 3): string[] {
  const r = ref.toLowerCase();
  const scored: Array<[number, string]> = [];
  for (const name of new Set(names)) {
    if (name === '') continue;
    const n = name.toLowerCase();
    const cap = Math.max(2, Math.floor(Math.max(n.length, r.length) / 3));
    const d = editDistance(r, n, cap);
    if (d <= cap) scored.push([d, name]);
    else if (r.length >= 3 && (n.includes(r) || r.includes(n))) scored.push([cap + 1, name]);
  }
  scored.sort((x, y) => x[0] - y[0] || (x[1] < y[1] ? -1 : x[1] > y[1] ? 1 : 0));
  return scored.slice(0, max).map(([, n]) => n);
}

/** 404 `not_found` for `ref`, naming up to three close names. */
export function unknownReference(kind: string, forms: string, ref: string, names: Iterable<string>): ApiError {
  const near = closeNames(ref, names);
  const hint = near.length > 0 ? `; did you mean ${near.map((n) => JSON.stringify(n)).join(', ')}?` : '';
  return new ApiError('not_found', `no ${kind} with the ${forms} ${JSON.stringify(ref)}${hint}`);
}

/** 409 `ambiguous` for `ref`, listing every candidate with its id. */
export function ambiguousReference(kind: string, ref: string, found: readonly RefCandidate[]): ApiError {
  const listed = found.map((c) => `${JSON.stringify(c.label)} (${c.id})`).join(', ');
  return new ApiError('ambiguous', `${JSON.stringify(ref)} names ${found.length} ${kind}s: ${listed}; give one of these ids`);
}

/** The id of the one record `ref` denotes, or 404 with close names, or 409 `ambiguous`. */
export async function resolveReference(lookup: RefLookup, ref: string): Promise<RefCandidate> {
  const found = await lookup.exact(ref);
  // One record whose id is the reference wins over others that merely carry it as a name.
  const byId = found.find((c) => c.id === ref.toLowerCase());
  if (byId) return byId;
  const unique = [...new Map(found.map((c) => [c.id, c])).values()];
  if (unique.length === 1) return unique[0] as RefCandidate;
  if (unique.length > 1) throw ambiguousReference(lookup.kind, ref, unique);
  throw unknownReference(lookup.kind, lookup.forms, ref, await lookup.names());
}
