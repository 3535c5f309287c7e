/**
 * Issue 30 item 7: every string a request carries (path parameter, query parameter, body field at
 * any depth, record value) refuses control characters, C1 controls and bidi overrides, by the one
 * shared rule (contract/common.ts Text) or a narrower pattern, literal or enum. The walk reads the
 * compiled route table, so a new route with a bare `Type.String()` fails here.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Compile } from 'typebox/compile';
import Type from 'typebox';
import { allRoutes } from '../../src/routes.js';
import { Text } from '../../src/contract/common.js';

interface Schema {
  type?: string | string[];
  pattern?: string;
  const?: unknown;
  enum?: unknown[];
  properties?: Record<string, Schema>;
  patternProperties?: Record<string, Schema>;
  additionalProperties?: boolean | Schema;
  items?: Schema;
  anyOf?: Schema[];
  oneOf?: Schema[];
  allOf?: Schema[];
}

/** One of each kind the rule refuses, inside otherwise plain text. */
export const BAD_TEXT = ['\u0000', '\u0001', '\t', '\n', '\u001b', '\u007f', '\u0085', '\u009b', '\u202a', '\u202e', '\u2066', '\u2069'];

/** Values some field accepts: plain text, an e-mail, a region, a UUID, a timestamp, base64url, a cursor. */
const VALID_SAMPLES = [
  'a',
  'abc',
  'x@example.test',
  'eu',
  '0190aaaa-0000-7000-8000-000000000001',
  '2026-01-01T00:00:00.000000000Z',
  'AAAA',
  '1',
  'a.b',
];

function stringsOf(s: Schema, at: string, out: Array<[string, Schema]>): void {
  if (s.type === 'string' || (Array.isArray(s.type) && s.type.includes('string'))) out.push([at, s]);
  for (const [k, v] of Object.entries(s.properties ?? {})) stringsOf(v, `${at}/${k}`, out);
  for (const [k, v] of Object.entries(s.patternProperties ?? {})) {
    // An opaque JSON object (an agent tool's input, approval params) is data, carried and hashed as given.
    if ((s as { 'x-opaque'?: boolean })['x-opaque'] !== true) out.push([`${at}/{key ${k}}`, { type: 'string', pattern: k }]);
    stringsOf(v, `${at}/*`, out);
  }
  if (typeof s.additionalProperties === 'object') stringsOf(s.additionalProperties, `${at}/*`, out);
  if (s.items) stringsOf(s.items, `${at}/0`, out);
  for (const x of [...(s.anyOf ?? []), ...(s.oneOf ?? []), ...(s.allOf ?? [])]) stringsOf(x, at, out);
}

test('every string of every request schema refuses control, C1 and bidi characters', () => {
  const missing: string[] = [];
  let checked = 0;
  for (const r of allRoutes()) {
    // The web console's pages ignore their query (the SPA reads it in the browser): UI assets, not API.
    if (r.unlisted === 'ui-asset') continue;
    for (const part of ['params', 'query', 'body'] as const) {
      const schema = r[part] as Schema | undefined;
      if (!schema) continue;
      const strings: Array<[string, Schema]> = [];
      stringsOf(schema, `${r.method} ${r.path} ${part}`, strings);
      for (const [at, s] of strings) {
        checked++;
        if (s.const !== undefined || s.enum !== undefined) continue;
        if (s.pattern === undefined) {
          missing.push(`${at}: no pattern`);
          continue;
        }
        const check = Compile(Type.String({ pattern: s.pattern }));
        // The bad character inside values the field's own pattern accepts (an e-mail needs its @).
        const bases = VALID_SAMPLES.filter((v) => check.Check(v));
        const multiline = (s as { 'x-multiline'?: boolean })['x-multiline'] === true;
        const let_through = BAD_TEXT.filter((c) => !(multiline && (c === '\t' || c === '\n'))).filter(
          (c) =>
            check.Check(c) || bases.some((v) => check.Check(v + c) || check.Check(c + v) || check.Check(v.slice(0, 1) + c + v.slice(1))),
        );
        if (let_through.length > 0) missing.push(`${at}: lets ${let_through.map((c) => JSON.stringify(c)).join(' ')} through`);
      }
    }
  }
  assert.ok(checked > 50, `only ${checked} strings found`);
  assert.deepEqual(missing, []);
});

test('Text keeps a field pattern and adds the rule', () => {
  const email = Compile(Text({ pattern: '^[^\\s@]+@[^\\s@]+$' }));
  assert.equal(email.Check('a@b.test'), true);
  assert.equal(email.Check('a\u202e@b.test'), false);
  assert.equal(email.Check('ab.test'), false);
  const plain = Compile(Text({ maxLength: 5 }));
  assert.equal(plain.Check('héllo'), true);
  assert.equal(plain.Check('😀'), true);
  for (const c of BAD_TEXT) assert.equal(plain.Check(`a${c}`), false, JSON.stringify(c));
  assert.throws(() => Text({ pattern: 'a+' }), /anchored/);
});
