/**
 * Issue 48 item 9: values a store cannot hold, in every part of every route of both OpenAPI
 * documents, through the real `svc serve` on both stores. Path parameters get NUL, control
 * characters, an over-long string and a huge integer; integer query parameters and integer body
 * fields get 2^63 (one past Postgres bigint), -2^63 - 1, 2^53 - 1 (the largest the contract accepts),
 * 1e400 and a 30-digit number; string query parameters and body strings an over-long value. No
 * answer may be a 5xx (Postgres answered 500 to `"revision": 9223372036854775808` and to a NUL in a
 * finding id; SQLite did not). A value the schema accepts may succeed: only the 5xx are counted.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { call, type TestServer } from '../helpers/server.js';
import { client, serveBackends } from '../helpers/serve-stores.js';

const ADMIN = { email: 'root@example.test', password: 'correct horse battery staple' };

interface Schema {
  type?: string;
  pattern?: string;
  format?: string;
  const?: unknown;
  enum?: unknown[];
  minLength?: number;
  maxLength?: number;
  minimum?: number;
  maximum?: number;
  properties?: Record<string, Schema>;
  required?: string[];
  patternProperties?: Record<string, Schema>;
  additionalProperties?: boolean | Schema;
  items?: Schema;
  anyOf?: Schema[];
}
interface Parameter {
  name: string;
  in: 'query' | 'path' | 'header';
  required?: boolean;
  schema: Schema;
}
interface Operation {
  parameters?: Parameter[];
  requestBody?: { content: { 'application/json': { schema: Schema } } };
}

const LONG = 'a'.repeat(5000);
/** Raw path segments (already percent-encoded). */
const PATH_SAMPLES: Array<[string, string]> = [
  ['NUL', '%00'],
  ['NUL in a UUID', `${randomUUID().slice(0, 35)}%00`],
  ['SOH', 'a%01b'],
  ['DEL', 'a%7Fb'],
  ['over-long', LONG],
  ['2^63', '9223372036854775808'],
  ['invalid UTF-8', '%C3%28'],
];
/** Integer samples as JSON/query text (not JS numbers: 2^63 must reach the server digit for digit). */
const INTEGERS: Array<[string, string]> = [
  ['2^63', '9223372036854775808'],
  ['-2^63-1', '-9223372036854775809'],
  ['2^53-1', '9007199254740991'],
  ['-(2^53-1)', '-9007199254740991'],
  ['1e400', '1e400'],
  ['30 digits', '123456789012345678901234567890'],
];
const CANDIDATES = ['fuzz-value-12345678', 'x@example.test', 'agent', 'eu', 'AAAA', '1', '2026-01-01T00:00:00.000000000Z'];

function stringValue(s: Schema): string {
  if (s.format === 'uuid') return randomUUID();
  const fits = (v: string) =>
    (s.pattern === undefined || new RegExp(s.pattern, 'u').test(v)) &&
    v.length >= (s.minLength ?? 0) &&
    v.length <= (s.maxLength ?? Infinity);
  return CANDIDATES.find(fits) ?? 'a'.repeat(Math.max(1, s.minLength ?? 1));
}

/** A value the schema accepts, as far as the generator can tell (required properties only). */
function valid(s: Schema): unknown {
  if (s.const !== undefined) return s.const;
  if (s.enum !== undefined) return s.enum[0];
  if (s.anyOf) return valid(s.anyOf.find((x) => x.type !== 'null') ?? (s.anyOf[0] as Schema));
  switch (s.type) {
    case 'string':
      return stringValue(s);
    case 'integer':
    case 'number':
      return Math.max(s.minimum ?? 1, Math.min(1, s.maximum ?? 1));
    case 'boolean':
      return false;
    case 'array':
      return s.items ? [valid(s.items)] : [];
    case 'object': {
      const out: Record<string, unknown> = {};
      for (const k of s.required ?? []) out[k] = valid((s.properties ?? {})[k] as Schema);
      return out;
    }
    default:
      return null;
  }
}

/** Paths (property names, 0 for array items) to every field of `type` in a schema, optional ones included. */
function pathsOf(type: string, s: Schema, at: string[] = []): string[][] {
  if (s.const !== undefined || s.enum !== undefined) return [];
  if (s.anyOf)
    return s.anyOf.flatMap((x) => pathsOf(type, x, at)).filter((p, i, all) => all.findIndex((q) => q.join('/') === p.join('/')) === i);
  if (s.type === type) return [at];
  if (s.type === 'array' && s.items) return pathsOf(type, s.items, [...at, '0']);
  const out: string[][] = [];
  for (const [k, v] of Object.entries(s.properties ?? {})) out.push(...pathsOf(type, v, [...at, k]));
  for (const v of Object.values(s.patternProperties ?? {})) out.push(...pathsOf(type, v, [...at, 'team']));
  return out;
}

/** `base` (a valid body) with `value` at `path`, creating the optional parents from the schema. */
function withValue(schema: Schema, base: unknown, path: string[], value: unknown): unknown {
  if (path.length === 0) return value;
  const [head, ...rest] = path as [string, ...string[]];
  const sub = schema.anyOf ? (schema.anyOf.find((x) => x.type !== 'null') as Schema) : schema;
  if (sub.type === 'array') {
    const arr = Array.isArray(base) && base.length > 0 ? [...base] : [valid(sub.items as Schema)];
    arr[0] = withValue(sub.items as Schema, arr[0], rest, value);
    return arr;
  }
  const child =
    sub.properties?.[head] ??
    Object.values(sub.patternProperties ?? {})[0] ??
    (typeof sub.additionalProperties === 'object' ? sub.additionalProperties : {});
  const obj = { ...((base as Record<string, unknown>) ?? {}) };
  obj[head] = withValue(child, obj[head] ?? valid(child), rest, value);
  return obj;
}

const MARK = '__svc_fuzz_number__';
/** JSON text of `body` with the marker string replaced by raw number text. */
function jsonWithNumber(body: unknown, digits: string): string {
  return JSON.stringify(body).replace(`"${MARK}"`, digits);
}

/** Routes left out, and why: they would end the walker's session or server. */
const SKIP = new Set(['POST /v1/auth/logout', 'POST /v1/system/shutdown']);

for (const b of await serveBackends()) {
  describe(`${b.backend}: out-of-range values in every part of every route`, { skip: b.skip }, () => {
    let server: TestServer;
    let send: ReturnType<typeof client>;
    before(async () => {
      server = await b.start({ env: { SERVICE_AUDIT_CHECKPOINT_INTERVAL: '0', SERVICE_RATE_LIMIT_RPS: '0' }, timeoutMs: 120_000 });
      const setupToken = /svcst_[A-Z2-7]+/.exec(server.stdout())?.[0] as string;
      const json = { 'content-type': 'application/json' };
      const setup = await call(server, 'POST', '/v1/setup', {
        headers: json,
        body: JSON.stringify({ token: setupToken, ...ADMIN, organization: 'Acme' }),
      });
      assert.equal(setup.status, 201, setup.text);
      const login = await call(server, 'POST', '/v1/auth/login', { headers: json, body: JSON.stringify(ADMIN) });
      send = client(server, login.json().token as string, setup.json().organization.id as string);
    });
    after(async () => {
      await server?.stop();
    });

    test('zero 5xx', { timeout: 600_000 }, async () => {
      const bad: string[] = [];
      let sent = 0;
      const probe = async (what: string, method: string, p: string, body?: string) => {
        const res = await send(method, p, body);
        sent++;
        if (res.status >= 500) bad.push(`${what}: ${res.status} ${res.text.slice(0, 160)}`);
      };
      for (const docPath of ['/openapi.json', '/openapi.beta.json']) {
        const doc = (await send('GET', docPath)).json() as { paths: Record<string, Record<string, Operation>> };
        for (const [template, ops] of Object.entries(doc.paths)) {
          for (const [m, op] of Object.entries(ops)) {
            const method = m.toUpperCase();
            if (SKIP.has(`${method} ${template}`)) continue;
            const query = (op.parameters ?? []).filter((p) => p.in === 'query');
            const requiredQuery = (except?: string) =>
              query
                .filter((p) => p.required && p.name !== except)
                .map((p) => `${encodeURIComponent(p.name)}=${encodeURIComponent(String(valid(p.schema)))}`);
            const withQuery = (p: string, parts: string[]) => (parts.length ? `${p}?${parts.join('&')}` : p);
            const bodySchema = op.requestBody?.content['application/json'].schema;
            const validBody = bodySchema ? JSON.stringify(valid(bodySchema)) : undefined;
            const path = template.replace(/\{[a-z_]+\}/g, () => randomUUID());
            // Path parameters, one at a time, the others a fresh UUID.
            for (const name of template.match(/\{[a-z_]+\}/g) ?? []) {
              for (const [label, raw] of PATH_SAMPLES) {
                const p = template.replace(/\{[a-z_]+\}/g, (x) => (x === name ? raw : randomUUID()));
                await probe(`${method} ${template} path ${name} ${label}`, method, withQuery(p, requiredQuery()), validBody);
              }
            }
            for (const q of query) {
              const s = q.schema.type === 'array' && q.schema.items ? q.schema.items : q.schema;
              if (s.enum !== undefined || s.const !== undefined) continue;
              const samples =
                s.type === 'integer' || s.type === 'number'
                  ? INTEGERS
                  : s.type === 'string'
                    ? [['over-long', LONG] as [string, string]]
                    : [];
              for (const [label, v] of samples) {
                const p = withQuery(path, [...requiredQuery(q.name), `${encodeURIComponent(q.name)}=${encodeURIComponent(v)}`]);
                await probe(`${method} ${template} query ${q.name} ${label}`, method, p, validBody);
              }
            }
            if (bodySchema) {
              const base = valid(bodySchema);
              for (const ip of [...pathsOf('integer', bodySchema), ...pathsOf('number', bodySchema)]) {
                for (const [label, digits] of INTEGERS) {
                  const text = jsonWithNumber(withValue(bodySchema, base, ip, MARK), digits);
                  await probe(`${method} ${template} body /${ip.join('/')} ${label}`, method, withQuery(path, requiredQuery()), text);
                }
              }
              for (const sp of pathsOf('string', bodySchema)) {
                const text = JSON.stringify(withValue(bodySchema, base, sp, LONG.repeat(20)));
                await probe(`${method} ${template} body /${sp.join('/')} over-long`, method, withQuery(path, requiredQuery()), text);
              }
            }
          }
        }
      }
      assert.ok(sent > 500, `only ${sent} requests`);
      // The session survived the walk, so the answers above were not all 401s.
      assert.equal((await send('GET', '/v1/auth/whoami')).status, 200);
      assert.deepEqual(bad, [], `${bad.length} of ${sent} answers were 5xx`);
    });
  });
}
