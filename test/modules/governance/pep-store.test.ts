/**
 * Policy revisions, kill switches and the hook decision on both stores: revisions are numbered per
 * tenant and surface and signed; a document that does not compile is refused and the active one
 * keeps deciding; rollback; another tenant sees none of it; every decision is one ledger record
 * with the input redacted, and a kill switch forces deny.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { decideHook } from '../../../src/modules/governance/pep-service.js';
import {
  activePolicy,
  getRevision,
  listRevisions,
  publishRevision,
  rollbackRevision,
} from '../../../src/modules/governance/policy-store.js';
import { policySigner, sha256Hex } from '../../../src/modules/governance/policy-signing.js';
import { engageKillSwitch, releaseKillSwitch } from '../../../src/modules/governance/kill-switch.js';
import { testStores, type TestStore } from '../../helpers/stores.js';
import { addTenant } from '../../store/store-fixtures.js';
import { drain, govHarness, type GovHarness } from './harness.js';

const DOC =
  `@id("git") permit(principal, action == Svc::Action::"PreToolUse", resource == Svc::Tool::"Bash") when { context.tool_input has ` +
  `command && context.tool_input.command like "git *" };`;

for (const b of await testStores()) {
  describe(`${b.backend}: policy revisions and decisions`, { skip: b.skip }, () => {
    let h: TestStore;
    let tenant: string;
    let other: string;
    let dataDir: string;
    let g: GovHarness;
    before(async () => {
      h = await b.create({ sqliteSynchronous: 'normal' });
      await h.store.migrate();
      tenant = await addTenant(h.store);
      other = await addTenant(h.store);
      dataDir = await mkdtemp(path.join(tmpdir(), 'svc-gov-'));
      g = govHarness(h.store, tenant, dataDir);
    });
    after(async () => {
      await h?.dispose();
      await rm(dataDir, { recursive: true, force: true });
    });

    it('publish numbers and signs revisions; a bad document changes nothing; rollback; other tenants see nothing', async () => {
      const r1 = await publishRevision(h.store, dataDir, tenant, { surface: 'hooks', content: DOC, note: 'one', actor: 'user:x' });
      const r2 = await publishRevision(h.store, dataDir, tenant, {
        surface: 'hooks',
        content: `${DOC}\n@id("read") permit(principal, action, resource == Svc::Tool::"Read");`,
        note: 'two',
        actor: 'user:x',
      });
      assert.deepEqual([r1.revision, r2.revision], [1, 2]);
      assert.equal(
        (await publishRevision(h.store, dataDir, tenant, { surface: 'other', content: DOC, actor: 'user:x' })).revision,
        1,
        'numbered per surface',
      );
      const signer = await policySigner(dataDir);
      assert.equal(r2.sha256, sha256Hex(r2.content));
      assert.equal(r2.key_fingerprint, signer.fingerprint);
      assert.ok(signer.verify(Buffer.from(r2.content), r2.signature));
      await assert.rejects(
        publishRevision(h.store, dataDir, tenant, { surface: 'hooks', content: 'forbid(principal, action', actor: 'user:x' }),
        { code: 'bad_request' },
      );
      assert.equal((await getRevision(h.store, tenant, 'hooks', 'active')).revision, 2);
      assert.equal((await listRevisions(h.store, tenant, 'hooks')).length, 2);
      const rb = await rollbackRevision(h.store, tenant, 'hooks', 1);
      assert.deepEqual([rb.from, rb.to.revision], [2, 1]);
      assert.equal((await activePolicy(h.store, tenant, 'hooks'))?.revision, 1);
      await assert.rejects(rollbackRevision(h.store, tenant, 'hooks', 9), { code: 'not_found' });
      assert.deepEqual(await listRevisions(h.store, other, 'hooks'), []);
      await assert.rejects(getRevision(h.store, other, 'hooks', 1), { code: 'not_found' });
      await assert.rejects(rollbackRevision(h.store, other, 'hooks', 1), { code: 'not_found' });
    });

    it('each decision is one ledger record with the input redacted and one event; a kill switch forces deny', async () => {
      const ctx = g.as(randomUUID(), 'token');
      const n0 = g.audit.appended.length;
      const allow = await decideHook(ctx, {
        hook_event_name: 'PreToolUse',
        session_id: 's',
        tool_name: 'Bash',
        tool_input: { command: 'git log', token: 'svck_SECRET' },
      });
      assert.equal(allow.decision, 'allow');
      assert.equal(allow.revision, 1);
      const deny = await decideHook(ctx, {
        hook_event_name: 'PreToolUse',
        session_id: 's',
        tool_name: 'Bash',
        tool_input: { command: 'rm -rf /' },
      });
      assert.equal(deny.decision, 'deny');
      const recs = g.audit.appended.slice(n0);
      assert.deepEqual(recs.map((r) => r.draft.action), ['pep.decision', 'pep.decision']);
      assert.ok(!JSON.stringify(recs[0]!.draft.meta).includes('SECRET'));
      await engageKillSwitch(h.store, tenant, `agent:${ctx.principal.actor}`, 'compromised', 'user:x');
      const killed = await decideHook(ctx, {
        hook_event_name: 'PreToolUse',
        session_id: 's',
        tool_name: 'Bash',
        tool_input: { command: 'git log' },
      });
      assert.deepEqual([killed.decision, killed.kill_switch], ['deny', `agent:${ctx.principal.actor}`]);
      // Another credential of the tenant is not covered by that agent's switch.
      assert.equal(
        (
          await decideHook(g.as(randomUUID(), 'token'), {
            hook_event_name: 'PreToolUse',
            session_id: 's',
            tool_name: 'Bash',
            tool_input: { command: 'git log' },
          })
        ).decision,
        'allow',
      );
      await releaseKillSwitch(h.store, tenant, `agent:${ctx.principal.actor}`);
      assert.equal(
        (await decideHook(ctx, { hook_event_name: 'PreToolUse', session_id: 's', tool_name: 'Bash', tool_input: { command: 'git log' } }))
          .decision,
        'allow',
      );
      await assert.rejects(releaseKillSwitch(h.store, tenant, 'tenant'), { code: 'not_found' });
      // Another tenant without a policy: deny by default, and not the first tenant's switch.
      const og = govHarness(h.store, other, dataDir);
      assert.equal(
        (
          await decideHook(og.as(randomUUID()), {
            hook_event_name: 'PreToolUse',
            session_id: 's',
            tool_name: 'Bash',
            tool_input: { command: 'git log' },
          })
        ).revision,
        null,
      );
      await drain();
      assert.ok(g.events.filter((e) => e.type === 'pep.decided').length >= 4);
    });
  });
}
