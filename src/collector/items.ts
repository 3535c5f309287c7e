/**
 * What a collector source produces: observation items in the shape of ingest.proto
 * (`EdgeObservation`, `Finding`, `CostSample`). A source line or file entry is a JSON object;
 * `kind` (`edge`, default; `finding`; `cost`) picks the list. Only the proto's fields are kept,
 * with their proto types; the core validates the values and rejects bad items one by one.
 */

export type ItemKind = 'edge' | 'finding' | 'cost';

const FIELDS: Record<ItemKind, Record<string, 'string' | 'number'>> = {
  edge: {
    origin_kind: 'string',
    origin_id: 'string',
    origin_ref: 'string',
    resource_id: 'string',
    resource_ref: 'string',
    mode: 'string',
    confidence: 'string',
    signal_source: 'string',
    observed_at: 'string',
    attribution: 'string',
    count: 'number',
  },
  finding: { rule: 'string', severity: 'string', subject: 'string', message: 'string', observed_at: 'string' },
  cost: {
    agent: 'string',
    model: 'string',
    input_tokens: 'number',
    output_tokens: 'number',
    cost_micros: 'number',
    currency: 'string',
    observed_at: 'string',
  },
};

/** One item, tagged with its kind. */
export interface Item {
  kind: ItemKind;
  fields: Record<string, string | number>;
}

/** Parse one source record; undefined (with a reason) when it is not a usable object. */
export function parseItem(value: unknown): { item?: Item; error?: string } {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return { error: 'not a JSON object' };
  const obj = value as Record<string, unknown>;
  const kind = (obj['kind'] ?? 'edge') as ItemKind;
  const spec = FIELDS[kind];
  if (!spec) return { error: `unknown kind ${JSON.stringify(obj['kind'])}` };
  const fields: Record<string, string | number> = {};
  for (const [name, type] of Object.entries(spec)) {
    const v = obj[name];
    if (v === undefined || v === null) continue;
    if (type === 'number') {
      // Large integers as strings are fine too (uint64 token counts).
      const n = typeof v === 'number' ? v : typeof v === 'string' && /^\d+$/.test(v) ? Number(v) : NaN;
      if (!Number.isSafeInteger(n) || n < 0) return { error: `${name} must be a non-negative integer` };
      fields[name] = n;
    } else {
      // Strings pass through unchanged, unknown enum strings included: the core rejects them per item.
      fields[name] = typeof v === 'string' ? v : JSON.stringify(v);
    }
  }
  return { item: { kind, fields } };
}

/** The items of one batch grouped into the proto's three lists. */
export function toBatchLists(items: readonly Item[]): {
  edges: Record<string, unknown>[];
  findings: Record<string, unknown>[];
  costs: Record<string, unknown>[];
} {
  const out = { edges: [] as Record<string, unknown>[], findings: [] as Record<string, unknown>[], costs: [] as Record<string, unknown>[] };
  for (const it of items) (it.kind === 'edge' ? out.edges : it.kind === 'finding' ? out.findings : out.costs).push(it.fields);
  return out;
}
