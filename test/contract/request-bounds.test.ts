/**
 * Issue 48 item 9, on the route table: every path parameter of every route is declared in the
 * route's `params` schema with a shape (a UUID, a pattern, a literal or an enumeration) the router
 * checks before anything else reads it, and every integer of a request (path, query, body at any
 * depth) is bounded to what every store holds (contract/integer-bounds.ts). A new route with an
 * undeclared `{id}` or an unbounded integer fails here.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import Type from 'typebox';
import { allRoutes } from '../../src/routes.js';
import { compileRoutes } from '../../src/contract/registry.js';
import { boundIntegers, MAX_REQUEST_INTEGER } from '../../src/contract/integer-bounds.js';

interface Schema {
  type?: string | string[];
  pattern?: string;
  format?: string;
  const?: unknown;
  enum?: unknown[];
  maxLength?: number;
  minimum?: number;
  maximum?: number;
  properties?: Record<string, Schema>;
  patternProperties?: Record<string, Schema>;
  additionalProperties?: boolean | Schema;
  items?: Schema;
  anyOf?: Schema[];
  oneOf?: Schema[];
  allOf?: Schema[];
}

function integersOf(s: Schema, at: string, out: Array<[string, Schema]>): void {
  if (s.type === 'integer' || (Array.isArray(s.type) && s.type.includes('integer'))) out.push([at, s]);
  for (const [k, v] of Object.entries(s.properties ?? {})) integersOf(v, `${at}/${k}`, out);
  for (const v of Object.values(s.patternProperties ?? {})) integersOf(v, `${at}/*`, out);
  if (typeof s.additionalProperties === 'object') integersOf(s.additionalProperties, `${at}/*`, out);
  if (s.items) integersOf(s.items, `${at}/0`, out);
  for (const x of [...(s.anyOf ?? []), ...(s.oneOf ?? []), ...(s.allOf ?? [])]) integersOf(x, at, out);
}

/** A path parameter's schema has a shape: a UUID, a pattern, a literal, an enumeration, a (bounded) integer, or a union of those. */
function shaped(s: Schema): boolean {
  if (s.anyOf) return s.anyOf.every(shaped);
  return s.format === 'uuid' || s.pattern !== undefined || s.const !== undefined || s.enum !== undefined || s.type === 'integer';
}

/**
 * Parameters that are free text by design, with why: the web console's `/<section>/{rest}` pages
 * answer the same page whatever the client-side path holds (a bounded string no store ever sees).
 */
const FREE = (method: string, path: string, name: string): boolean =>
  method === 'GET' && name === 'rest' && /^\/[a-z-]+\/\{rest\}$/.test(path);

test('every path parameter is declared with a shape the router checks', () => {
  const missing: string[] = [];
  let checked = 0;
  for (const r of allRoutes()) {
    for (const m of r.path.matchAll(/\{([a-z_]+)\}/g)) {
      checked++;
      const name = m[1] as string;
      const s = (r.params as Schema | undefined)?.properties?.[name];
      if (s === undefined) missing.push(`${r.method} ${r.path}: {${name}} is not in its params schema`);
      else if (!shaped(s) && !FREE(r.method, r.path, name))
        missing.push(`${r.method} ${r.path}: {${name}} has no format, pattern, literal or enumeration`);
    }
  }
  assert.ok(checked > 50, `only ${checked} path parameters`);
  assert.deepEqual(missing, []);
});

test('every integer of every request schema is bounded to ±(2^53 − 1), declared bounds kept', () => {
  const routes = allRoutes();
  compileRoutes(routes);
  const unbounded: string[] = [];
  let checked = 0;
  for (const r of routes) {
    for (const part of ['params', 'query', 'body'] as const) {
      const schema = r[part] as Schema | undefined;
      if (!schema) continue;
      const found: Array<[string, Schema]> = [];
      integersOf(schema, part, found);
      for (const [at, s] of found) {
        checked++;
        if (
          typeof s.maximum !== 'number' ||
          s.maximum > MAX_REQUEST_INTEGER ||
          typeof s.minimum !== 'number' ||
          s.minimum < -MAX_REQUEST_INTEGER
        )
          unbounded.push(`${r.method} ${r.path} ${at}: [${s.minimum}, ${s.maximum}]`);
      }
    }
  }
  assert.ok(checked > 20, `only ${checked} integers`);
  assert.deepEqual(unbounded, []);
  // Narrower declared bounds are kept; a wider one is narrowed; nested integers are reached.
  const s = Type.Object({
    a: Type.Integer({ minimum: 1, maximum: 1000 }),
    b: Type.Integer({ maximum: 2 ** 63 }),
    c: Type.Array(Type.Union([Type.Integer(), Type.Null()])),
  });
  boundIntegers(s);
  const p = s.properties as unknown as Record<string, Schema>;
  assert.deepEqual([p['a']?.minimum, p['a']?.maximum], [1, 1000]);
  assert.deepEqual([p['b']?.minimum, p['b']?.maximum], [-MAX_REQUEST_INTEGER, MAX_REQUEST_INTEGER]);
  assert.equal((p['c']?.items?.anyOf?.[0] as Schema).maximum, MAX_REQUEST_INTEGER);
});
