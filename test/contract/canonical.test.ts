import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import Type from 'typebox';
import { Uuid } from '../../src/contract/common.js';
import { uuidCanonicalizer } from '../../src/contract/canonical.js';
import { makeChecker } from '../../src/contract/registry.js';

const A = '01A212DA-D441-77C3-A4BB-CF57CA73DEC8';
const a = A.toLowerCase();

describe('canonical UUIDs at the edge', () => {
  it('lowercases every UUID a schema holds: nested objects, arrays, optional and nullable fields, records', () => {
    const schema = Type.Object({
      id: Uuid,
      maybe: Type.Optional(Uuid),
      nullable: Type.Union([Uuid, Type.Null()]),
      list: Type.Array(Type.Object({ origin: Type.Object({ id: Type.Optional(Uuid), ref: Type.Optional(Type.String()) }) })),
      byName: Type.Record(Type.String(), Uuid),
      ref: Type.String(),
    });
    const f = uuidCanonicalizer(schema);
    assert.ok(f);
    const value = { id: A, maybe: A, nullable: null, list: [{ origin: { id: A } }, { origin: { ref: A } }], byName: { x: A }, ref: A };
    assert.deepEqual(f(value), {
      id: a,
      maybe: a,
      nullable: null,
      list: [{ origin: { id: a } }, { origin: { ref: A } }],
      byName: { x: a },
      ref: A,
    });
    assert.equal((f({ id: A, nullable: A, list: [], byName: {}, ref: 'x' }) as { nullable: string }).nullable, a);
  });

  it('leaves free-form strings alone, even when they look like a UUID (refs, names are the caller’s own)', () => {
    const f = uuidCanonicalizer(Type.Object({ ref: Type.String(), name: Type.String() }));
    assert.equal(f, undefined, 'no walker for a schema without a UUID');
  });

  it('a compiled route checker carries it only where a UUID can appear', () => {
    assert.ok(makeChecker(Type.Object({ agent_id: Uuid })).canonical);
    assert.equal(makeChecker(Type.Object({ q: Type.String() })).canonical, undefined);
  });
});
