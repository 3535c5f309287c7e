/**
 * Which binding carries the bus (docs/eventing.md "Several replicas"): `SERVICE_BUS` is
 * `in-process` (the default) or `nats`, with `SERVICE_NATS_URL` (one or more comma-separated
 * `nats://host:port` or `tls://host:port`; credentials are refused in the URL). Checked when
 * `svc serve` starts: a bad value exits 2 naming the variable.
 */
export type BusConfig = { kind: 'in-process' } | { kind: 'nats'; servers: string[] };

/** `SERVICE_BUS` and `SERVICE_NATS_URL`, checked; throws with a message naming the variable. */
export function busConfigFromEnv(env: NodeJS.ProcessEnv = process.env): BusConfig {
  const kind = (env['SERVICE_BUS'] ?? '').trim() || 'in-process';
  if (kind === 'in-process') {
    if (env['SERVICE_NATS_URL']) throw new Error('SERVICE_NATS_URL is set but SERVICE_BUS is not "nats"; set SERVICE_BUS=nats to use it');
    return { kind };
  }
  if (kind !== 'nats') throw new Error(`SERVICE_BUS must be "in-process" or "nats", got ${JSON.stringify(kind)}`);
  const raw = (env['SERVICE_NATS_URL'] ?? '').trim();
  if (!raw) throw new Error('SERVICE_BUS=nats needs SERVICE_NATS_URL, e.g. nats://127.0.0.1:4222');
  const servers = raw.split(',').map((s) => s.trim());
  for (const s of servers) {
    let u: URL;
    try {
      u = new URL(s);
    } catch {
      throw new Error(`SERVICE_NATS_URL: ${JSON.stringify(s)} is not a URL (nats://host:port)`);
    }
    if (!['nats:', 'tls:'].includes(u.protocol) || !u.hostname || u.pathname.replace(/^\/$/, '') !== '')
      throw new Error(`SERVICE_NATS_URL: ${JSON.stringify(s)} must be nats://host:port or tls://host:port`);
    if (u.username || u.password) throw new Error('SERVICE_NATS_URL must not carry credentials');
  }
  return { kind: 'nats', servers };
}

