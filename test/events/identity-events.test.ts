/**
 * API keys and users announce their changes in the durable event log of the tenants they concern,
 * on both stores (on Postgres their transactions are bound to no tenant, so the log rows must still
 * pass row-level security): a key bound to a tenant in that tenant only, a key bound to none in
 * every tenant of its owner; a user created in the tenant it was made in, disabled and enabled in
 * every tenant it is a member of. No event carries a key's secret or a user's e-mail; a refused change announces
 * nothing; receiving them takes `user:read` (admins): an admin sees them, a viewer does not.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { moduleDeployment, serveBackends, type ModuleDeployment } from '../helpers/serve-stores.js';

interface LoggedEvent {
  type: string;
  subject: string;
  tenantid: string;
  data: Record<string, unknown>;
}

for (const b of await serveBackends()) {
  describe(`${b.backend}: token and user events in the event log`, { skip: b.skip }, () => {
    let d: ModuleDeployment;
    before(async () => {
      d = await moduleDeployment(b, { vera: 'viewer', ada: 'admin' });
    });
    after(async () => d?.stop());

    const events = async (token: string, tenant: string, type: string): Promise<LoggedEvent[]> => {
      const res = await d.send(token, 'GET', `/v1/m/eventing/events?type=${type}&limit=1000`, undefined, tenant);
      assert.equal(res.status, 200, res.text);
      return res.json().items as LoggedEvent[];
    };

    it('a bound key: issued, rotated and revoked in its tenant only, never with its secret', async () => {
      const owner = d.tokens['owner'] as string;
      const issued = await d.send(owner, 'POST', '/v1/tokens', { name: 'ci', role: 'editor', tenant: d.tenant });
      assert.equal(issued.status, 201, issued.text);
      const key = issued.json();
      const rotated = await d.send(owner, 'POST', `/v1/tokens/${key.id}/rotate`);
      assert.equal(rotated.status, 201, rotated.text);
      const fresh = rotated.json();
      assert.equal((await d.send(owner, 'DELETE', `/v1/tokens/${fresh.id}`)).status, 204);
      // Refused: a role above the caller's ceiling is not a change, so nothing is announced.
      assert.notEqual((await d.send(owner, 'POST', '/v1/tokens', { name: 'x', role: 'no-such-role' })).status, 201);

      const seen = [
        ...(await events(owner, d.tenant, 'token.issued')),
        ...(await events(owner, d.tenant, 'token.rotated')),
        ...(await events(owner, d.tenant, 'token.revoked')),
      ].filter((e) => e.subject === `token/${key.id}` || e.subject === `token/${fresh.id}`);
      assert.deepEqual(
        seen.map((e) => [e.type, e.subject, e.tenantid]),
        [
          ['token.issued', `token/${key.id}`, d.tenant],
          ['token.rotated', `token/${fresh.id}`, d.tenant],
          ['token.revoked', `token/${fresh.id}`, d.tenant],
        ],
      );
      assert.equal(seen[1]?.data['rotated_from'], key.id);
      assert.equal(seen[0]?.data['role'], 'editor');
      const text = JSON.stringify(seen);
      assert.ok(!text.includes(key.token) && !text.includes(fresh.token), 'no event carries a secret');
      assert.deepEqual(
        (await events(owner, d.otherTenant, 'token.issued')).filter((e) => e.subject === `token/${key.id}`),
        [],
        'not in the other tenant',
      );
      // Every role manages its own keys (`token:*`); other people's keys are an admin's business.
      assert.deepEqual(await events(d.tokens['vera'] as string, d.tenant, 'token.issued'), []);
      const adminSees = await events(d.tokens['ada'] as string, d.tenant, 'token.issued');
      assert.equal(adminSees.filter((e) => e.subject === `token/${key.id}`).length, 1);
    });

    it('a key bound to no tenant is announced in every tenant its owner is a member of, and only there', async () => {
      const owner = d.tokens['owner'] as string;
      const res = await d.send(owner, 'POST', '/v1/tokens', { name: 'everywhere', superadmin: true });
      assert.equal(res.status, 201, res.text);
      const id = res.json().id as string;
      const inAcme = (await events(owner, d.tenant, 'token.issued')).filter((e) => e.subject === `token/${id}`);
      assert.deepEqual(
        inAcme.map((e) => [e.tenantid, e.data['superadmin'], e.data['tenant']]),
        [[d.tenant, true, null]],
      );
      // The owner (the superadmin who made Other) is no member of Other.
      assert.deepEqual((await events(owner, d.otherTenant, 'token.issued')).filter((e) => e.subject === `token/${id}`), []);
    });

    it('a user: created in its tenant; disabled and enabled in each tenant it belongs to', async () => {
      const owner = d.tokens['owner'] as string;
      const made = await d.send(owner, 'POST', '/v1/users', { email: 'ivan@example.test', password: 'a long enough password' });
      assert.equal(made.status, 201, made.text);
      const id = made.json().id as string;
      assert.equal((await d.send(owner, 'POST', `/v1/users/${id}/disable`)).status, 200);
      // Disabling again changes nothing and announces nothing.
      assert.equal((await d.send(owner, 'POST', `/v1/users/${id}/disable`)).status, 200);
      assert.equal((await d.send(owner, 'POST', `/v1/users/${id}/enable`)).status, 200);
      const mine = async (type: string) => (await events(owner, d.tenant, type)).filter((e) => e.subject === `user/${id}`);
      assert.deepEqual(
        [...(await mine('user.created')), ...(await mine('user.disabled')), ...(await mine('user.enabled'))].map((e) => [
          e.type,
          e.tenantid,
          e.data['status'],
        ]),
        [
          ['user.created', d.tenant, 'active'],
          ['user.disabled', d.tenant, 'disabled'],
          ['user.enabled', d.tenant, 'active'],
        ],
      );
      const logged = JSON.stringify(await events(owner, d.tenant, 'user.created'));
      assert.ok(!logged.includes('ivan@example.test'), 'no e-mail address in the log: it would outlive an erasure');
      assert.deepEqual(
        (await events(owner, d.otherTenant, 'user.created')).filter((e) => e.subject === `user/${id}`),
        [],
        'a user of Acme only is not announced in Other',
      );
      // Reading users is an admin's: a viewer does not receive their events, an admin does.
      assert.deepEqual(await events(d.tokens['vera'] as string, d.tenant, 'user.created'), []);
      const adminSees = await events(d.tokens['ada'] as string, d.tenant, 'user.created');
      assert.equal(adminSees.filter((e) => e.subject === `user/${id}`).length, 1);
    });
  });
}
