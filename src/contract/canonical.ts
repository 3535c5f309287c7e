/**
 * Canonical UUIDs at the edge. UUIDs are case-insensitive on input (RFC 9562 §4) and svc stores and
 * answers them lowercase (DECISIONS.md). The request schemas accept either case, so every value a
 * `format: 'uuid'` schema validated is lowercased before a handler sees it: a client that sends
 * `01A2…` finds the agent it created as `01a2…` on SQLite (text keys) exactly as on PostgreSQL
 * (uuid columns), and no uppercase id reaches a filter, a store or the ledger. gRPC ingest
 * lowercases its ids itself (src/grpc/ingest-items.ts); the gRPC control plane goes through these
 * routes.
 *
 * Compiled once per schema (STYLE.md rule 1): a schema without a UUID anywhere gets no walker, and
 * a walker visits only the branches that hold one.
 */
import type { TSchema } from 'typebox';

/** Lowercases, in place, the UUIDs of a value its schema has already accepted; returns it. */
export type Canonicalizer = (value: unknown) => unknown;

type Schema = {
  type?: unknown;
  format?: unknown;
  properties?: Record<string, Schema>;
  patternProperties?: Record<string, Schema>;
  additionalProperties?: unknown;
  items?: unknown;
  anyOf?: Schema[];
  oneOf?: Schema[];
  allOf?: Schema[];
};

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The canonicalizer of `schema`, or undefined when no value it accepts can hold a UUID. */
export function uuidCanonicalizer(schema: TSchema): Canonicalizer | undefined {
  return compile(schema as Schema);
}

function compile(s: Schema): Canonicalizer | undefined {
  if (s.format === 'uuid') return (v) => (typeof v === 'string' ? v.toLowerCase() : v);
  const members = [...(s.anyOf ?? []), ...(s.oneOf ?? []), ...(s.allOf ?? [])]
    .map(compile)
    .filter((f): f is Canonicalizer => f !== undefined);
  // A union or intersection: each member's walker touches only values of its own shape, so
  // applying all of them is safe (Nullable(Uuid) lowercases the string and leaves null alone).
  if (members.length > 0) return (v) => members.reduce((acc, f) => f(acc), v);
  if (s.type === 'array' && typeof s.items === 'object' && s.items !== null) {
    const item = compile(s.items as Schema);
    if (item === undefined) return undefined;
    return (v) => {
      if (Array.isArray(v)) for (let i = 0; i < v.length; i++) v[i] = item(v[i]);
      return v;
    };
  }
  if (s.type === 'object') {
    const props = Object.entries(s.properties ?? {}).flatMap(([k, p]) => {
      const f = compile(p);
      return f === undefined ? [] : [[k, f] as const];
    });
    // Records (Type.Record: patternProperties) and open maps: every other key's value.
    const rest = [
      ...Object.values(s.patternProperties ?? {}),
      ...(isRecord(s.additionalProperties) ? [s.additionalProperties as Schema] : []),
    ]
      .map(compile)
      .filter((f): f is Canonicalizer => f !== undefined);
    if (props.length === 0 && rest.length === 0) return undefined;
    const named = new Set(Object.keys(s.properties ?? {}));
    return (v) => {
      if (!isRecord(v)) return v;
      for (const [k, f] of props) if (k in v) v[k] = f(v[k]);
      if (rest.length > 0) for (const k of Object.keys(v)) if (!named.has(k)) v[k] = rest.reduce((acc, f) => f(acc), v[k]);
      return v;
    };
  }
  return undefined;
}
