/**
 * Issue 30 item 7: a schema-driven fuzz over both OpenAPI documents, through the real `svc serve`
 * on both stores. Every string field of every request body (at any depth) and every string query
 * parameter gets NUL, a lone surrogate, C0 and C1 controls and bidi overrides inside an otherwise
 * valid request (the other fields are generated from the schema). No answer may be a 5xx, and both
 * stores refuse every one with a 4xx envelope (Postgres used to answer 500 to a NUL; SQLite stored
 * it). Bounded: one request per (field, sample), a few hundred per store.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { writeFileSync } from 'node:fs';
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

/** The samples; the query form of a lone surrogate is its raw UTF-8 encoding (CESU), which no encoder makes. */
const SAMPLES: Array<[string, string]> = [
  ['NUL', '\u0000'],
  ['lone surrogate', '\ud800'],
  ['SOH', '\u0001'],
  ['ESC', '\u001b'],
  ['NEL (C1)', '\u0085'],
  ['CSI (C1)', '\u009b'],
  ['RLO (bidi override)', '\u202e'],
  ['LRI (bidi isolate)', '\u2066'],
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

/** Paths (property names, 0 for array items) to every free string of a schema, optional ones included. */
function stringPaths(s: Schema, at: string[] = []): string[][] {
  if (s.const !== undefined || s.enum !== undefined) return [];
  if (s.anyOf)
    return s.anyOf.flatMap((x) => stringPaths(x, at)).filter((p, i, all) => all.findIndex((q) => q.join('/') === p.join('/')) === i);
  if (s.type === 'string') return [at];
  if (s.type === 'array' && s.items) return stringPaths(s.items, [...at, '0']);
  const out: string[][] = [];
  for (const [k, v] of Object.entries(s.properties ?? {})) out.push(...stringPaths(v, [...at, k]));
  for (const v of Object.values(s.patternProperties ?? {})) out.push(...stringPaths(v, [...at, 'team']));
  return out;
}

/** `base` (a valid body) with `value` at `path`, creating the optional parents from the schema. */
function withValue(schema: Schema, base: unknown, path: string[], value: string): unknown {
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

function queryPart(name: string, value: string): string {
  return `${encodeURIComponent(name)}=${value.split('\ud800').map(encodeURIComponent).join('%ED%A0%80')}`;
}

for (const b of await serveBackends()) {
  describe(`${b.backend}: control characters in every string field of both OpenAPI documents`, { skip: b.skip }, () => {
    let server: TestServer;
    let send: ReturnType<typeof client>;
    before(async () => {
      server = await b.start({ env: { SERVICE_AUDIT_CHECKPOINT_INTERVAL: '0', SERVICE_RATE_LIMIT_RPS: '0' } });
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

    test('zero 5xx, and every sample refused with a 4xx envelope', { timeout: 120_000 }, async () => {
      const started = Date.now();
      const bad: string[] = [];
      let sent = 0;
      for (const docPath of ['/openapi.json', '/openapi.beta.json']) {
        const doc = (await send('GET', docPath)).json() as { paths: Record<string, Record<string, Operation>> };
        for (const [template, ops] of Object.entries(doc.paths)) {
          for (const [method, op] of Object.entries(ops)) {
            const path = template.replace(/\{[a-z_]+\}/g, () => randomUUID());
            const params = (op.parameters ?? []).filter((p) => p.in === 'query');
            const requiredQuery = params.filter((p) => p.required).map((p) => queryPart(p.name, String(valid(p.schema))));
            const bodySchema = op.requestBody?.content['application/json'].schema;
            const targets: Array<{ what: string; make: (v: string) => { p: string; body?: string } }> = [];
            for (const q of params) {
              const s = q.schema.type === 'array' && q.schema.items ? q.schema.items : q.schema;
              if (s.type !== 'string' || s.enum !== undefined || s.const !== undefined) continue;
              const others = params.filter((x) => x.required && x.name !== q.name).map((x) => queryPart(x.name, String(valid(x.schema))));
              targets.push({ what: `query ${q.name}`, make: (v) => ({ p: `${path}?${[...others, queryPart(q.name, v)].join('&')}` }) });
            }
            if (bodySchema) {
              const base = valid(bodySchema);
              for (const sp of stringPaths(bodySchema)) {
                targets.push({
                  what: `body /${sp.join('/')}`,
                  make: (v) => ({
                    p: requiredQuery.length ? `${path}?${requiredQuery.join('&')}` : path,
                    body: JSON.stringify(withValue(bodySchema, base, sp, `a${v}b`)),
                  }),
                });
              }
            }
            for (const t of targets) {
              for (const [name, c] of SAMPLES) {
                const r = t.make(t.what.startsWith('query') ? `a${c}b` : c);
                const res = await send(method.toUpperCase(), r.p, r.body);
                sent++;
                let envelope = false;
                try {
                  envelope = typeof res.json().error?.code === 'string';
                } catch {
                  envelope = false;
                }
                // A query string cannot carry a lone surrogate: percent-decoding makes it U+FFFD, which is text.
                const mustRefuse = !(name === 'lone surrogate' && t.what.startsWith('query'));
                if (res.status >= 500 || (mustRefuse && (res.status < 400 || !envelope)))
                  bad.push(`${method.toUpperCase()} ${template} ${t.what} ${name}: ${res.status} ${res.text.slice(0, 160)}`);
              }
            }
          }
        }
      }
      const seconds = (Date.now() - started) / 1000;
      assert.ok(sent > 300, `only ${sent} requests`);
      assert.ok(seconds < 60, `${sent} requests took ${seconds} s`);
      if (bad.length) writeFileSync("/tmp/fuzzbad-" + process.pid + ".txt", bad.join("\n"));
      assert.deepEqual(bad, [], `${bad.length} of ${sent} answers were not a 4xx envelope`);
    });
  });
}
