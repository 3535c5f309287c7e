/**
 * Relying-party settings of the WebAuthn step-up (W3C WebAuthn Level 3 §5.1.3, §13.4.9):
 * the RP ID scopes credentials to a registrable domain, and the origin check binds each
 * ceremony to the page that ran it. `SERVICE_WEBAUTHN_RP_ID` (default `localhost`),
 * `SERVICE_WEBAUTHN_RP_NAME` (default `svc`), `SERVICE_WEBAUTHN_ORIGINS` (comma-separated).
 */

export interface WebauthnSettings {
  rpId: string;
  rpName: string;
  /** exact origins accepted; empty means any `https://<rpId>[:port]` */
  origins: string[];
}

const RP_ID = /^(?=.{1,253}$)[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)*$/;

/** Reads `SERVICE_WEBAUTHN_*`; throws on an RP ID that is not a DNS name or an origin that is not https. */
export function webauthnSettingsFromEnv(env: NodeJS.ProcessEnv = process.env): WebauthnSettings {
  const rpId = (env['SERVICE_WEBAUTHN_RP_ID'] || 'localhost').trim().toLowerCase();
  // §5.1.3: an RP ID is a valid domain string; IP addresses are not allowed by browsers.
  if (!RP_ID.test(rpId) || /^[0-9.]+$/.test(rpId))
    throw new Error(`SERVICE_WEBAUTHN_RP_ID must be a DNS name (not an IP address); got ${JSON.stringify(rpId)}`);
  const origins = (env['SERVICE_WEBAUTHN_ORIGINS'] ?? '').split(',').map((o) => o.trim()).filter(Boolean);
  for (const o of origins) {
    let u: URL;
    try {
      u = new URL(o);
    } catch {
      throw new Error(`SERVICE_WEBAUTHN_ORIGINS: ${JSON.stringify(o)} is not a URL`);
    }
    if (u.protocol !== 'https:' || u.origin !== o)
      throw new Error(`SERVICE_WEBAUTHN_ORIGINS: ${JSON.stringify(o)} must be an https origin such as https://cp.example.com:8443`);
    if (!hostWithinRpId(u.hostname, rpId)) throw new Error(`SERVICE_WEBAUTHN_ORIGINS: ${o} is not within the RP ID ${rpId}`);
  }
  return { rpId, rpName: env['SERVICE_WEBAUTHN_RP_NAME'] || 'svc', origins };
}

/** The origin a ceremony ran on is acceptable: one of the configured origins, or https on the RP ID's host. */
export function originAllowed(origin: string, settings: WebauthnSettings): boolean {
  if (settings.origins.length > 0) return settings.origins.includes(origin);
  let u: URL;
  try {
    u = new URL(origin);
  } catch {
    return false;
  }
  return u.protocol === 'https:' && u.origin === origin && u.hostname === settings.rpId;
}

function hostWithinRpId(host: string, rpId: string): boolean {
  return host === rpId || host.endsWith(`.${rpId}`);
}
