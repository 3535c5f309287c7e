/**
 * The audit trace of refused SSO starts (`auth.sso_start_refused`, system chain), aggregated so a
 * flood cannot fill the ledger: the first refusal of a client address for a reason is recorded at
 * once; the next ones within a minute are counted, and the count is recorded when the minute is over
 * (`refused`: how many refusals the record stands for). Counts are per replica.
 */
import { SYSTEM_TENANT } from '../../ledger/record.js';
import type { Services } from '../../serve/services.js';

export const REFUSAL_WINDOW_MS = 60_000;
/** Addresses × reasons tallied at once; beyond it the oldest tally is recorded early and dropped. */
const MAX_TALLIES = 10_000;

interface Tally {
  s: Services;
  ip: string;
  client: string;
  reason: string;
  since: number;
  count: number;
  timer?: NodeJS.Timeout;
}

const tallies = new Map<string, Tally>();

function append(t: Tally, refused: number): Promise<unknown> {
  return t.s.audit.append(SYSTEM_TENANT, {
    actor: 'anonymous',
    actor_kind: 'anonymous',
    action: 'auth.sso_start_refused',
    target_kind: 'sso',
    target_id: '',
    meta: { ip: t.ip, client: t.client, reason: t.reason, refused, window_seconds: REFUSAL_WINDOW_MS / 1000 },
  });
}

/** Record the refusals counted since the tally's last record, if any. */
function flush(key: string, t: Tally): void {
  if (t.timer) clearTimeout(t.timer);
  t.timer = undefined;
  const n = t.count;
  t.count = 0;
  t.since = Date.now();
  if (tallies.get(key) === t && n === 0) tallies.delete(key);
  // A failed append is lost here (no request to fail): the ledger's own alarms cover an unwritable ledger.
  if (n > 0) append(t, n).catch(() => undefined);
}

/** Note one refused start; awaits the record when this refusal opens a new window. */
export async function recordStartRefusal(s: Services, ip: string, client: string, reason: string): Promise<void> {
  const key = `${client}\n${reason}`;
  const now = Date.now();
  const t = tallies.get(key);
  if (t && now - t.since < REFUSAL_WINDOW_MS) {
    t.count++;
    if (!t.timer) t.timer = setTimeout(() => flush(key, t), t.since + REFUSAL_WINDOW_MS - now).unref();
    return;
  }
  if (t) {
    tallies.delete(key);
    flush(key, t);
  }
  if (tallies.size >= MAX_TALLIES) {
    const [oldKey, old] = tallies.entries().next().value as [string, Tally];
    tallies.delete(oldKey);
    flush(oldKey, old);
  }
  const fresh: Tally = { s, ip, client, reason, since: now, count: 0 };
  tallies.set(key, fresh);
  await append(fresh, 1);
}
