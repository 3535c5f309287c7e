/**
 * Every integer a request carries fits every store (issue 48): a JSON or query integer is a
 * double, so `9223372036854775808` passes `type: integer`, and PostgreSQL then refuses it as out of
 * bigint range (a 500) while SQLite quietly stored a rounded value. The route table bounds each
 * integer of a request schema to ±(2^53 − 1), the exact integers of a double, which every bigint
 * column holds, unless the schema declares narrower bounds. Applied when the table is compiled, so
 * no route can forget it, and the OpenAPI documents show the bounds.
 */
import type { TSchema } from 'typebox';

/** The largest integer a request may carry: 2^53 − 1. */
export const MAX_REQUEST_INTEGER = Number.MAX_SAFE_INTEGER;

const CHILD = ['items', 'additionalProperties', 'not', 'if', 'then', 'else', 'contains', 'propertyNames'] as const;
const CHILD_LISTS = ['anyOf', 'oneOf', 'allOf', 'prefixItems'] as const;
const CHILD_MAPS = ['properties', 'patternProperties', '$defs', 'definitions'] as const;

/** Sets `minimum`/`maximum` in place on every integer of `schema` that has none, or a wider one. */
export function boundIntegers(schema: TSchema): void {
  walk(schema, new Set());
}

function walk(node: unknown, seen: Set<object>): void {
  if (typeof node !== 'object' || node === null || seen.has(node)) return;
  seen.add(node);
  const s = node as Record<string, unknown>;
  const types = Array.isArray(s['type']) ? (s['type'] as unknown[]) : [s['type']];
  if (types.includes('integer')) {
    const max = s['maximum'];
    const min = s['minimum'];
    if (typeof max !== 'number' || max > MAX_REQUEST_INTEGER) s['maximum'] = MAX_REQUEST_INTEGER;
    if (typeof min !== 'number' || min < -MAX_REQUEST_INTEGER) s['minimum'] = -MAX_REQUEST_INTEGER;
  }
  for (const k of CHILD) walk(s[k], seen);
  for (const k of CHILD_LISTS) if (Array.isArray(s[k])) for (const x of s[k] as unknown[]) walk(x, seen);
  for (const k of CHILD_MAPS) {
    const m = s[k];
    if (typeof m === 'object' && m !== null) for (const x of Object.values(m)) walk(x, seen);
  }
}
