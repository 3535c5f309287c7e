/**
 * Redaction of identifiers from free text (src/store/redact.ts), on both stores: ASCII-only case
 * folding (a Kelvin-sign look-alike is not the subject's address), JSON text, unique columns kept
 * distinct, rows of another tenant untouched, version bumped only where something changed.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createAgent, getAgent } from '../../src/core/agents/agent-service.js';
import { redactor, redactRows, REDACTED } from '../../src/store/redact.js';
import { nowTimestamp } from '../../src/ledger/time.js';
import { testStores, type TestStore } from '../helpers/stores.js';
import { addTenant } from './store-fixtures.js';

describe('redactor', () => {
  it('folds A-Z only, longest needle first', () => {
    const r = redactor(['kim@example.test', 'Kim Lee'])!;
    assert.equal(r('mail KIM@Example.TEST or kim lee'), `mail ${REDACTED} or ${REDACTED}`);
    // U+212A KELVIN SIGN lowercases to "k" in Unicode; it is another address, not the subject's.
    assert.equal(r('\u212Aim@example.test'), '\u212Aim@example.test');
    assert.equal(r('a.b'), 'a.b');
    assert.equal(redactor(['']), null);
  });
  it('matches a needle as JSON escapes it', () => {
    const r = redactor(['say "hi" now'])!;
    assert.equal(r(JSON.stringify({ m: 'say "hi" now!' })), JSON.stringify({ m: `${REDACTED}!` }));
  });
});

for (const b of await testStores()) {
  describe(`${b.backend}: redactRows`, { skip: b.skip }, () => {
    let h: TestStore;
    before(async () => {
      h = await b.create();
      await h.store.migrate();
    });
    after(async () => h?.dispose());

    it('redacts the tenant rows that hold a needle, keeps unique columns distinct, leaves the rest', async () => {
      const tenant = await addTenant(h.store);
      const other = await addTenant(h.store);
      const a = await createAgent(h.store, tenant, { name: 'bot of KIM@example.test', external_id: 'kim@example.test', labels: {} });
      const c = await createAgent(h.store, tenant, { name: 'copy', external_id: 'Kim@Example.test' });
      const k = await createAgent(h.store, tenant, { name: '\u212Aim@example.test' });
      const elsewhere = await createAgent(h.store, other, { name: 'kim@example.test' });
      const spec = {
        table: 'agents' as const,
        key: ['id'],
        columns: ['name', 'labels', 'external_id'],
        unique: ['external_id'],
        version: 'version',
        updatedAt: 'updated_at',
      };
      const n = await h.store.withTenant(tenant, (tx) =>
        redactRows(tx, { ...spec, where: { tenant_id: tenant } }, ['kim@example.test'], nowTimestamp()),
      );
      assert.equal(n, 2);
      const a2 = await getAgent(h.store, tenant, a.id);
      assert.equal(a2.name, `bot of ${REDACTED}`);
      assert.equal(a2.external_id, `${REDACTED} ${a.id}`);
      assert.equal(a2.version, a.version + 1);
      assert.deepEqual(a2.labels, {});
      assert.equal((await getAgent(h.store, tenant, c.id)).external_id, `${REDACTED} ${c.id}`);
      const k2 = await getAgent(h.store, tenant, k.id);
      assert.equal(k2.name, '\u212Aim@example.test');
      assert.equal(k2.version, k.version);
      assert.equal((await getAgent(h.store, other, elsewhere.id)).name, 'kim@example.test');
    });
  });
}
