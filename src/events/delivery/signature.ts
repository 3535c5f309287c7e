/**
 * Standard Webhooks signing (DECISIONS.md "Webhook signatures"): `webhook-signature` is
 * `v1,<base64 HMAC-SHA256 of "{id}.{timestamp}.{body}">` keyed with the base64 part of a
 * `whsec_` secret; during a rotation's grace window the old secret's signature follows, space-separated.
 */
import { createHmac, randomBytes } from 'node:crypto';

export const SECRET_PREFIX = 'whsec_';

/** A new signing secret: `whsec_` + base64 of 32 random bytes. */
export function newWebhookSecret(): string {
  return SECRET_PREFIX + randomBytes(32).toString('base64');
}

/** `v1,<base64>` for one secret. */
export function signV1(secret: string, id: string, timestamp: number, body: string | Buffer): string {
  const key = Buffer.from(secret.startsWith(SECRET_PREFIX) ? secret.slice(SECRET_PREFIX.length) : secret, 'base64');
  const mac = createHmac('sha256', key).update(`${id}.${timestamp}.`).update(body).digest('base64');
  return `v1,${mac}`;
}

/** The three Standard Webhooks headers, signed with every given secret (current first). */
export function webhookHeaders(
  secrets: readonly string[],
  id: string,
  body: string | Buffer,
  timestamp = Math.floor(Date.now() / 1000),
): Record<string, string> {
  return {
    'webhook-id': id,
    'webhook-timestamp': String(timestamp),
    'webhook-signature': secrets.map((s) => signV1(s, id, timestamp, body)).join(' '),
  };
}
