/**
 * The support bundle (`POST /v1/console/support-bundle`): a streamed `.tar.gz` an operator can
 * hand to support. Built only from facts that carry no secret: version and build, the redacted
 * effective config, health, setup status, migrations, row counts, ledger heads and a verify summary
 * of each chain's tail, key custody without public keys, connector states. It never reads a secret
 * value, a token, a password hash, key material or a person's data (e-mail, names): users appear
 * as counts. As a second line of defence every file passes `scrub` (token prefixes, URL passwords).
 */
import { connectorHealth } from '../connectors/health.js';
import { createHash } from 'node:crypto';
import type { Readable } from 'node:stream';
import type { Services } from '../../serve/services.js';
import { GLOBAL_TABLES } from '../../store/schema.js';
import { SQLITE_MIGRATIONS } from '../../store/sqlite/sqlite-migrations.js';
import { POSTGRES_MIGRATIONS } from '../../store/postgres/postgres-migrations.js';
import { effectiveConfig, redactUrlPassword } from './effective-config.js';
import { ledgerHeads } from './console-state.js';
import { healthSummary, keyCustody, setupSteps, storedSettings } from './status-routes.js';
import { tarGzStream, type TarFile } from './tar-gz.js';

/** Tables whose row counts go into the bundle; every global table except the ones that could be large is counted. */
const SKIP_COUNT = new Set<string>(['audit_intents']);
/** Verify at most this many records at the tail of each chain (chain + checkpoints, signatures too). */
const VERIFY_TAIL = 10_000;

/** Removes anything shaped like a credential that slipped into text: token prefixes, URL passwords. */
export function scrub(text: string): string {
  const noTokens = text.replace(/\b(svcs|svck|svcst|whsec)_[A-Za-z0-9_+/=-]+/g, '$1_[redacted]');
  return redactUrlPassword(noTokens).value;
}

const json = (v: unknown): string => `${JSON.stringify(v, null, 2)}\n`;

async function* sections(s: Services): AsyncGenerator<TarFile> {
  const files: Array<{ name: string; sha256: string; bytes: number }> = [];
  const file = (name: string, body: string): TarFile => {
    const clean = scrub(body);
    files.push({ name, sha256: createHash('sha256').update(clean).digest('hex'), bytes: Buffer.byteLength(clean) });
    return { name: `svc-support/${name}`, body: clean };
  };
  const safe = async (name: string, fn: () => Promise<unknown>): Promise<TarFile> => {
    try {
      return file(name, json(await fn()));
    } catch (err) {
      // A failing section is reported in the bundle, never allowed to stop the rest of it.
      return file(name, json({ error: (err as Error).message }));
    }
  };
  yield file(
    'version.json',
    json({
      ...s.build,
      engine: s.engine,
      store: s.store.backend,
      generated_at: new Date().toISOString(),
      uptime_seconds: Math.floor((Date.now() - s.startedAt) / 1000),
    }),
  );
  yield await safe('config-effective.json', async () => ({ settings: effectiveConfig(s.config, process.env, await storedSettings(s)) }));
  yield await safe('health-summary.json', () => healthSummary(s));
  yield await safe('setup-status.json', () => setupSteps(s));
  yield await safe('migrations.json', async () => {
    const list = s.store.backend === 'postgres' ? POSTGRES_MIGRATIONS : SQLITE_MIGRATIONS;
    return { readiness: await s.storeReadiness(), known: list.map((m) => ({ version: m.version, name: m.name })) };
  });
  yield await safe('store-stats.json', async () => {
    const counts: Record<string, number> = {};
    await s.store.transaction(async (tx) => {
      for (const t of GLOBAL_TABLES) {
        if (SKIP_COUNT.has(t)) continue;
        const row = await tx.selectFrom(t).select((eb) => eb.fn.countAll<number | string>().as('n')).executeTakeFirst();
        counts[t] = Number(row?.n ?? 0);
      }
    });
    return { backend: s.store.backend, rows: counts };
  });
  // States, lag and errors only: configs hold secret references, never values, and are left out anyway.
  yield await safe('connectors.json', async () => connectorHealth(s.store, s.connectors));
  yield await safe('ledger.json', async () => {
    if (!s.ledger) return { chains: [], note: 'no ledger in this server' };
    const heads = await ledgerHeads(s);
    const chains = [];
    for (const h of heads) {
      const from = Math.max(1, h.head_seq - VERIFY_TAIL + 1);
      const r = await s.ledger.verify(h.tenant, from, true);
      chains.push({ ...h, verify: { from_seq: from, ok: r.ok, chain: r.chain, checkpoints: r.checkpoints, signatures: r.signatures } });
    }
    return { chains };
  });
  yield await safe('keys.json', async () => ({ keys: (await keyCustody(s)).map(({ public_key: _omit, ...rest }) => rest) }));
  yield file(
    'logs/README.txt',
    'svc serve keeps no log files: it writes JSON lines to stderr. Attach the lines from your supervisor (journalctl -u svc, kubectl ' +
      'logs) if support asks for them; they carry no request bodies or credentials.\n',
  );
  yield file('manifest.json', json({ files }));
}

/** The bundle as a gzip stream; errors end the stream (the client sees a truncated archive) and are logged. */
export function supportBundle(s: Services): Readable {
  return tarGzStream(sections(s), (err) => s.log.error({ err: (err as Error).message }, 'support bundle failed'));
}
