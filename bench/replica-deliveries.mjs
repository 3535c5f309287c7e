// Webhook deliveries/s drained by 1 or 2 replicas on one Postgres (+ NATS when SVC_TEST_NATS_URL is set):
// SUBS subscriptions to one loopback receiver (200 at once), created disabled; CREATES agents make a backlog of
// SUBS × CREATES deliveries; every subscription is enabled, and the rate is the deliveries between the first and
// the last receipt. Built output only: `npx tsc -p tsconfig.json` first, then
//   SVC_TEST_PG_DSN=postgres://postgres@127.0.0.1:5432/postgres node bench/replica-deliveries.mjs 1
//   SVC_TEST_PG_DSN=postgres://postgres@127.0.0.1:5432/postgres node bench/replica-deliveries.mjs 2
import { deploy, rest, setup } from '../dist/test/replicas/harness.js';
import { startReceiver } from '../dist/test/modules/eventing/harness.js';

const replicas = Number(process.argv[2] ?? 1);
const SUBS = Number(process.env.SUBS ?? 8);
const CREATES = Number(process.env.CREATES ?? 500);
const rx = await startReceiver(() => 200);
const nats = process.env.SVC_TEST_NATS_URL;
const dep = await deploy(replicas, {
  env: { SERVICE_EVENTING_ALLOW_INSECURE_ENDPOINTS: 'true', ...(nats ? { SERVICE_BUS: 'nats', SERVICE_NATS_URL: nats } : {}) },
});
try {
  const { session: token, tenant } = await setup(dep);
  const a = dep.replicas[0];
  const body = (i, enabled) =>
    ({ name: `s${i}`, enabled, event_types: ['agent.created'], endpoint: rx.url(`/s${i}`), sink_format: 'json' });
  const subs = [];
  for (let i = 0; i < SUBS; i++) {
    subs.push((await rest(a, 'POST', '/v1/m/eventing/subscriptions', { token, tenant, body: body(i, false) })).json());
  }
  for (let w = 0; w < 4; w++) {
    await Promise.all(Array.from({ length: CREATES / 4 }, async (_, i) => {
      const r = await rest(dep.replicas[i % replicas], 'POST', '/v1/agents', { token, tenant, body: { name: `b-${w}-${i}` } });
      if (r.status !== 201) throw new Error(r.text);
    }));
  }
  for (const [i, s] of subs.entries()) {
    const update = { ...body(i, true), version: s.version };
    const r = await rest(a, 'PUT', `/v1/m/eventing/subscriptions/${s.id}`, { token, tenant, body: update });
    if (r.status !== 200) throw new Error(r.text);
  }
  const total = SUBS * CREATES;
  let t0;
  let n0 = 0;
  const end = Date.now() + 300_000;
  while (rx.got.length < total && Date.now() < end) {
    if (t0 === undefined && rx.got.length > 0) [t0, n0] = [performance.now(), rx.got.length];
    await new Promise((r) => setTimeout(r, 20));
  }
  const s = (performance.now() - t0) / 1000;
  const perSecond = Math.round((rx.got.length - n0) / s);
  const seconds = Number(s.toFixed(2));
  console.log(JSON.stringify({ replicas, subscriptions: SUBS, deliveries: rx.got.length, seconds, per_second: perSecond }));
} finally {
  await dep.stop();
  await rx.close();
}
