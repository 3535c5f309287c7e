/**
 * `POST /v1/console/update-check`: compares the running version with a signed release manifest at
 * `SERVICE_UPDATE_MANIFEST_URL` (`{"release": {"version", "released_at", "url"?, "notes"?},
 * "signature"}`, Ed25519 against `SERVICE_UPDATE_PUBLIC_KEY` or the compiled-in key). No URL → no
 * network at all and the answer is `unknown`, never `current`: an air-gapped server cannot know.
 */
import { Agent, request } from 'undici';
import { publicKeyFrom, verifySignedDoc, type PublicKeyInfo } from './signed-doc.js';
import { licensePublicKey } from './license.js';

export type UpdateStatus = 'unknown' | 'current' | 'update_available';

export interface UpdateAnswer {
  status: UpdateStatus;
  running_version: string;
  latest_version: string | null;
  released_at: string | null;
  url: string | null;
  checked_at: string;
  reason: string | null;
}

interface Release {
  version: string;
  released_at: string;
  url?: string;
  notes?: string;
}

let last: UpdateAnswer | null = null;

/** The last answer of this process (health summary), or `unknown` before any check. */
export function lastUpdateStatus(): { status: UpdateStatus; checked_at: string | null; latest_version: string | null } {
  return last
    ? { status: last.status, checked_at: last.checked_at, latest_version: last.latest_version }
    : { status: 'unknown', checked_at: null, latest_version: null };
}

function updateKey(env: NodeJS.ProcessEnv): PublicKeyInfo {
  const configured = env['SERVICE_UPDATE_PUBLIC_KEY'];
  // The vendor signs releases and licenses with the same compiled-in key unless one is configured.
  return configured ? publicKeyFrom(configured, 'SERVICE_UPDATE_PUBLIC_KEY') : licensePublicKey({});
}

/** -1, 0, 1 by numeric dotted parts (pre-release suffixes sort before the release). */
export function compareVersions(a: string, b: string): number {
  const parse = (v: string) => {
    const [core = '', pre] = v.replace(/^v/, '').split('-', 2);
    return { parts: core.split('.').map((p) => Number(p) || 0), pre };
  };
  const x = parse(a);
  const y = parse(b);
  for (let i = 0; i < Math.max(x.parts.length, y.parts.length); i++) {
    const d = (x.parts[i] ?? 0) - (y.parts[i] ?? 0);
    if (d !== 0) return Math.sign(d);
  }
  if (x.pre === y.pre) return 0;
  if (x.pre === undefined) return 1;
  if (y.pre === undefined) return -1;
  return x.pre < y.pre ? -1 : 1;
}

export async function checkForUpdate(running: string, env: NodeJS.ProcessEnv = process.env): Promise<UpdateAnswer> {
  const url = env['SERVICE_UPDATE_MANIFEST_URL'];
  const checked_at = new Date().toISOString();
  const base = { running_version: running, checked_at, latest_version: null, released_at: null, url: null };
  let answer: UpdateAnswer;
  if (!url)
    answer = {
      ...base,
      status: 'unknown',
      reason: 'no release manifest URL configured (SERVICE_UPDATE_MANIFEST_URL); no network is used by default',
    };
  else {
    try {
      // certificate verification explicit, never NODE_TLS_REJECT_UNAUTHORIZED's (docs/tls.md "Outgoing TLS")
      const dispatcher = new Agent({ connect: { rejectUnauthorized: true } });
      const res = await request(url, { method: 'GET', headersTimeout: 10_000, bodyTimeout: 10_000, dispatcher }).finally(
        () => void dispatcher.close(),
      );
      const text = await res.body.text();
      if (res.statusCode !== 200) throw new Error(`the manifest URL answered HTTP ${res.statusCode}`);
      if (text.length > 64 * 1024) throw new Error('the manifest is larger than 64 KiB');
      const rel = verifySignedDoc<Release>(text, 'release', updateKey(env));
      if (typeof rel.version !== 'string') throw new Error('release.version is missing');
      const newer = compareVersions(rel.version, running) > 0;
      answer = {
        ...base,
        status: newer ? 'update_available' : 'current',
        latest_version: rel.version,
        released_at: typeof rel.released_at === 'string' ? rel.released_at : null,
        url: typeof rel.url === 'string' ? rel.url : null,
        reason: null,
      };
    } catch (err) {
      answer = { ...base, status: 'unknown', reason: `manifest not usable: ${(err as Error).message}` };
    }
  }
  last = answer;
  return answer;
}
