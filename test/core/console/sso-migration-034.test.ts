/**
 * Migration 34 on both stores: a database at version 33 with users stored by the old rule (full
 * Unicode lower case) upgrades without touching a row; afterwards the `users.email` check accepts the
 * new stored form (ASCII letters folded, `Ärger@…` kept) and still refuses an ASCII capital.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { testStores, type TestStore } from '../../helpers/stores.js';

const AT = '2026-06-01T10:00:00.000000000Z';
const user = (n: number, email: string) =>
  `insert into users (id, email, password_hash, superadmin, status, created_at, updated_at) values ` +
  `('01a25000-0000-7000-8000-00000000000${n}', '${email}', 'x', 0, 'active', '${AT}', '${AT}')`;

for (const b of await testStores()) {
  describe(`${b.backend}: migration 34 (pending SSO logins; e-mails folded on ASCII letters only)`, { skip: b.skip }, () => {
    let h: TestStore;
    before(async () => {
      h = await b.create();
      await h.store.migrate();
    });
    after(async () => h?.dispose());

    it('keeps every stored address; the new check takes the ASCII-folded form and refuses ASCII capitals', async () => {
      // Back to version 33: no pending-logins table, and on Postgres the check of migration 2.
      await h.admin.query('drop table sso_pending_logins');
      if (b.backend === 'postgres') {
        await h.admin.query('alter table users drop constraint users_email_ascii_folded');
        await h.admin.query(
          'alter table users add constraint users_email_check check (email = lower(email) and length(email) between 3 and 254)',
        );
      }
      await h.admin.query('delete from schema_migrations where version = 34');
      await h.admin.query(user(1, 'kim@example.test'));
      await h.admin.query(user(2, 'ärger@example.test'));
      if (b.backend === 'postgres')
        await assert.rejects(h.admin.query(user(3, 'Ärger@example.test')), /check/i, 'the old check folds Ä on Postgres');
      await h.store.close();
      const store = await h.reopen();
      assert.deepEqual((await store.migrate()).applied, [34]);
      const rows = await h.admin.query<{ email: string }>('select email from users order by id');
      assert.deepEqual(
        rows.map((r) => r.email),
        ['kim@example.test', 'ärger@example.test'],
      );
      await h.admin.query(user(3, 'Ärger@example.test'));
      await assert.rejects(h.admin.query(user(4, 'Kim@example.test')), /check|constraint/i);
      assert.deepEqual(await h.admin.query('select * from sso_pending_logins'), []);
    });
  });
}
