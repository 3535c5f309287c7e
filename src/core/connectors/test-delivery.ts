/**
 * `POST /v1/console/connectors/test`: one real delivery of a test event through a freshly opened sink
 * of the stored connector (its format, its receiver, its secrets resolved now), outside the lanes.
 */
import { ledgerDevice } from '../../encoders/ledger-fields.js';
import { encoderFor } from '../../encoders/registry.js';
import { nowTimestamp } from '../../ledger/time.js';
import { newId } from '../../store/ids.js';
import type { Sealer } from '../../secrets/sealing.js';
import type { Store } from '../../store/store.js';
import { resolveSecret, SecretUnavailableError } from '../console/secrets-service.js';
import type { ConnectorView } from './connector-store.js';
import { kindOf } from './kinds/index.js';
import { surfaceOf } from './runtime.js';

export interface TestOutcome {
  name: string;
  result: string;
  status: number | null;
  error: string | null;
  duration_ms: number;
  format: string;
  bytes: number;
}

export async function testDelivery(
  store: Store,
  sealer: Sealer,
  dataDir: string,
  version: string,
  conn: ConnectorView,
): Promise<TestOutcome> {
  const t0 = performance.now();
  const done = (result: string, error: string | null, status: number | null, bytes: number): TestOutcome => ({
    name: conn.name,
    result,
    status,
    error,
    duration_ms: Math.round((performance.now() - t0) * 10) / 10,
    format: conn.format,
    bytes,
  });
  const kind = kindOf(conn.kind);
  if (!kind) return done('failed', `unknown connector kind ${conn.kind}`, null, 0);
  try {
    for (const ref of conn.secret_refs) await resolveSecret(store, sealer, ref);
  } catch (err) {
    if (err instanceof SecretUnavailableError) return done('failed', err.message, null, 0);
    throw err;
  }
  const enc = encoderFor(surfaceOf(kind), conn.format);
  if (!enc.encodeEvent) return done('failed', `format ${conn.format} cannot encode events`, null, 0);
  const id = newId();
  const line = enc.encodeEvent(
    {
      id,
      type: 'connector.test',
      time: nowTimestamp(),
      severity: 'info',
      title: `svc connector test ${conn.name}`,
      fields: { connector: conn.name, kind: conn.kind },
      raw: { type: 'connector.test', id, connector: conn.name },
    },
    { device: ledgerDevice(version) },
  );
  const ctx = { secret: (ref: string) => resolveSecret(store, sealer, ref), dataDir, version, log: { warn() {}, info() {} } };
  let sink;
  try {
    sink = await kind.open(conn.config, ctx);
  } catch (err) {
    return done('failed', (err as Error).message, null, 0);
  }
  try {
    const ac = new AbortController();
    const timer = setTimeout(() => ac.abort(), 15_000);
    const res = await sink.send([{ line, id, tenant: conn.tenant ?? '' }], ac.signal).finally(() => clearTimeout(timer));
    return done(res.result, res.error ?? res.rejected?.[0]?.error ?? null, res.status ?? null, Buffer.byteLength(line));
  } catch (err) {
    return done('failed', (err as Error).message, null, 0);
  } finally {
    await sink.close().catch(() => undefined);
  }
}
