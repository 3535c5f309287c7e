/**
 * The detectors run when the access graph changes: an `edge.observed` event on the real bus makes
 * the security module evaluate that tenant (debounced), store the findings, append one ledger
 * record and publish `finding.reported` after the commit. A second event with nothing new changes
 * nothing and records nothing. SQLite only: the store paths are covered on both backends elsewhere.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import pino from 'pino';
import { createAgent } from '../../../src/core/agents/agent-service.js';
import { EventBus } from '../../../src/events/bus.js';
import { coreEvents } from '../../../src/events/core-events.js';
import { EventCatalog, type BusEvent } from '../../../src/events/event-types.js';
import { RecordingAuditSink } from '../../../src/ledger/audit-sink.js';
import { ingestObservations } from '../../../src/modules/accessmap/edge-store.js';
import { securityEvents } from '../../../src/modules/security/events.js';
import { listFindings } from '../../../src/modules/security/finding-store.js';
import { DUTY_SPACING, nextRunDelay, startSecurity } from '../../../src/modules/security/runner.js';
import type { Services } from '../../../src/serve/services.js';
import { createSqliteTestStore, type TestStore } from '../../helpers/stores.js';
import { addTenant } from '../../store/store-fixtures.js';

describe('security runner on the bus', () => {
  let h: TestStore;
  let stop: () => Promise<void>;
  let bus: EventBus;
  let audit: RecordingAuditSink;
  const heard: BusEvent[] = [];
  before(async () => {
    h = await createSqliteTestStore();
    await h.store.migrate();
    bus = new EventBus({ catalog: new EventCatalog([...coreEvents, ...securityEvents]) });
    bus.subscribe({ name: 'test', types: ['finding.reported', 'finding.updated'] }, (e) => void heard.push(e));
    audit = new RecordingAuditSink();
    process.env['SERVICE_FINDINGS_EVALUATE_INTERVAL_S'] = '0';
    stop = startSecurity({ store: h.store, events: bus, audit, log: pino({ level: 'warn' }, pino.destination(2)) } as unknown as Services);
  });
  after(async () => {
    await stop?.();
    await h?.dispose();
  });

  /** Waits past the debounce until `done` holds (at most 15 s on a loaded machine), then for the bus to drain. */
  const settle = async (done: () => boolean | Promise<boolean> = () => true): Promise<void> => {
    await new Promise((r) => setTimeout(r, 1_200));
    for (let i = 0; i < 150 && !(await done()); i++) await new Promise((r) => setTimeout(r, 100));
    await new Promise((r) => setTimeout(r, 300));
    await bus.idle();
  };

  it('edge.observed → an evaluation of that tenant: findings stored, one ledger record, finding.reported after the commit', async () => {
    const t = await addTenant(h.store);
    const a = await createAgent(h.store, t, { name: 'coder' });
    await ingestObservations(h.store, t, [
      {
        origin: { kind: 'agent', id: a.id },
        resource: { ref: 's3://secrets' },
        mode: 'rw',
        confidence: 'high',
        signal_source: 'proxy',
        observed_at: '2026-06-02T10:00:00.000000000Z',
      },
    ]);
    const observed = { type: 'edge.observed', tenant: t, subject: 'tenant/' + t, data: { count: 1 } };
    bus.announce(bus.stamp([observed, observed]));
    await settle(() => audit.appended.some((r) => r.tenant === t));
    const page = await listFindings(h.store, t, { limit: 10 });
    assert.deepEqual(page.items.map((f) => [f.rule_id, f.severity, f.status]), [['svc.drift.unexpected', 'high', 'open']]);
    assert.deepEqual(
      audit.appended.filter((r) => r.tenant === t).map((r) => [r.draft.action, r.draft.actor]),
      [['security.findings.evaluate', 'system']],
      'two events within the debounce share one run',
    );
    assert.deepEqual(
      heard.filter((e) => e.tenant === t).map((e) => [e.type, e.subject]),
      [['finding.reported', `finding/${page.items[0]?.id}`]],
    );

    bus.announce(bus.stamp([{ type: 'edge.observed', tenant: t, subject: 'tenant/' + t, data: { count: 1 } }]));
    await settle();
    assert.equal(audit.appended.filter((r) => r.tenant === t).length, 1, 'a background run that changed nothing records nothing');
    assert.equal(heard.filter((e) => e.tenant === t).length, 1);
  });
});

describe('spacing of graph-triggered runs', () => {
  it('the first run comes after the debounce; after a run of T ms the next waits DUTY_SPACING × T from its end', () => {
    assert.equal(nextRunDelay(10_000, undefined), 1_000);
    // A 10 ms run: the debounce still rules.
    assert.equal(nextRunDelay(10_000, { started: 9_000, ended: 9_010 }), 1_000);
    // A 4 s run that ended now: the next one no sooner than DUTY_SPACING × 4 s.
    assert.equal(nextRunDelay(20_000, { started: 16_000, ended: 20_000 }), DUTY_SPACING * 4_000);
    // Long after it ended: the debounce again.
    assert.equal(nextRunDelay(200_000, { started: 16_000, ended: 20_000 }), 1_000);
  });
});
