/** The shared reference resolver (src/contract/references.ts): close names, 404 with up to three, 409 `ambiguous`. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ApiError } from '../../src/contract/errors.js';
import { closeNames, editDistance, resolveReference, type RefCandidate } from '../../src/contract/references.js';

const lookup = (records: Array<RefCandidate & { keys: string[] }>) => ({
  kind: 'agent',
  forms: 'id, name or external id',
  exact: async (ref: string) => records.filter((r) => r.id === ref.toLowerCase() || r.keys.includes(ref)),
  names: async () => records.flatMap((r) => r.keys),
});

test('editDistance: Levenshtein, with the early stop past the cap', () => {
  assert.equal(editDistance('relase-bot', 'release-bot'), 1);
  assert.equal(editDistance('kitten', 'sitting'), 3);
  assert.equal(editDistance('', 'abc'), 3);
  assert.ok(editDistance('aaaaaaaa', 'bbbbbbbb', 2) > 2);
});

test('closeNames: at most three, closest first then alphabetical; nothing far', () => {
  const names = ['release-bot', 'releases-bot', 'relay-bot', 'release-bots', 'payments', 'zeta'];
  assert.deepEqual(closeNames('relase-bot', names), ['release-bot', 'relay-bot', 'release-bots']);
  assert.deepEqual(closeNames('qqqqqqqq', names), []);
  assert.deepEqual(closeNames('pay', ['payments-copilot']), ['payments-copilot'], 'a prefix counts');
});

test('resolveReference: id, unique name, 404 with close names, 409 ambiguous listing every candidate', async () => {
  const l = lookup([
    { id: '01900000-0000-7000-8000-000000000001', label: 'release-bot', keys: ['release-bot', 'ext-1'] },
    { id: '01900000-0000-7000-8000-000000000002', label: 'twin', keys: ['twin'] },
    { id: '01900000-0000-7000-8000-000000000003', label: 'twin', keys: ['twin'] },
  ]);
  assert.equal((await resolveReference(l, 'ext-1')).id, '01900000-0000-7000-8000-000000000001');
  assert.equal((await resolveReference(l, '01900000-0000-7000-8000-000000000002')).id, '01900000-0000-7000-8000-000000000002');
  await assert.rejects(resolveReference(l, 'relase-bot'), (err: unknown) => {
    assert.ok(err instanceof ApiError);
    assert.equal(err.status, 404);
    assert.equal(err.message, 'no agent with the id, name or external id "relase-bot"; did you mean "release-bot"?');
    return true;
  });
  await assert.rejects(resolveReference(l, 'twin'), (err: unknown) => {
    assert.ok(err instanceof ApiError);
    assert.deepEqual([err.status, err.code], [409, 'ambiguous']);
    assert.match(err.message, /000000000002.*000000000003/);
    return true;
  });
});
