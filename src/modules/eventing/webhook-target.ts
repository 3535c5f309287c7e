/**
 * The webhook target: one signed HTTPS POST per attempt (Standard Webhooks headers) over undici
 * keep-alive pools. Subscriptions without a CA bundle or pin share the runtime's agent (one pool of
 * connections per receiver origin); one with a CA bundle or pin has an agent of its own, whose
 * connector checks the pin before any byte of the body goes out. Redirects are never followed (a
 * 3xx is `failed`); the attempt times out after the subscription's timeout (default 10 s). 2xx
 * delivers; network errors, timeouts, 408, 425, 429 and 5xx retry (with the receiver's
 * `Retry-After`); any other status fails at once.
 */
import { createHash, X509Certificate } from 'node:crypto';
import type { TLSSocket } from 'node:tls';
import { Agent, buildConnector, type Dispatcher } from 'undici';
import { egressRefusalOf, guardConnector } from '../../events/egress/connect.js';
import { parseRetryAfter } from '../../events/delivery/ladder.js';
import { webhookHeaders } from '../../events/delivery/signature.js';
import type { AttemptOutcome, DeliveryJob, DeliveryTarget } from '../../events/delivery/target.js';
import { renderCached } from './render.js';

export interface WebhookSettings {
  endpoint: string;
  caPem?: string | null;
  /** base64 SHA-256 of the receiver's SubjectPublicKeyInfo (curl's `sha256//…` form without the prefix) */
  pinSha256?: string | null;
  sinkFormat: string;
  timeoutMs: number;
  /** current secret first, then the previous one while its grace window lasts */
  secrets: () => string[];
  /** extra request headers (receiver auth) */
  authHeaders: Record<string, string>;
  version: string;
  /** the shared agent for receivers without a CA bundle or pin (the runtime's) */
  shared?: Dispatcher;
  /** egress control: the refusal message when the policy forbids this endpoint now, else null */
  egressRefusal?: (endpoint: string) => Promise<string | null>;
}

/** An agent for many plain receivers: keep-alive, a pool per origin, no redirects (undici follows none unless told). */
export function sharedAgent(): Agent {
  // Verification is set here, not left to NODE_TLS_REJECT_UNAUTHORIZED; the guard checks every address connected to.
  const connect = guardConnector(buildConnector({ timeout: 10_000, rejectUnauthorized: true }));
  return new Agent({ connections: 256, keepAliveTimeout: 60_000, keepAliveMaxTimeout: 600_000, connect });
}

const RETRY_STATUSES = new Set([408, 425, 429]);

/** Classifies a receiver's status (docs/eventing.md "Statuses"). */
export function outcomeOf(status: number, retryAfter?: string | string[]): AttemptOutcome {
  if (status >= 200 && status < 300) return { result: 'delivered', status };
  if (RETRY_STATUSES.has(status) || status >= 500) {
    const retryAfterMs = status === 429 || status === 503 ? parseRetryAfter(retryAfter) : undefined;
    return { result: 'retry', status, error: `receiver answered ${status}`, ...(retryAfterMs !== undefined ? { retryAfterMs } : {}) };
  }
  if (status >= 300 && status < 400) return { result: 'failed', status, error: `receiver answered ${status}; redirects are not followed` };
  return { result: 'failed', status, error: `receiver answered ${status}` };
}

function spkiPin(raw: Buffer): string {
  const spki = new X509Certificate(raw).publicKey.export({ type: 'spki', format: 'der' });
  return createHash('sha256').update(spki).digest('base64');
}

/** An agent of its own for a receiver with a CA bundle or a pin: the connector refuses a key that does not match the pin. */
function privateAgent(caPem: string | null | undefined, pin: string | null | undefined, timeoutMs: number): Agent {
  // A pinned receiver is trusted by its key alone (a private receiver with a self-signed
  // certificate): the chain is not checked, the key is, before any byte of the body goes out.
  // rejectUnauthorized is always explicit (never the environment's): off only for a pinned key, checked below.
  const base = buildConnector({ timeout: timeoutMs, ...(caPem ? { ca: caPem } : {}), rejectUnauthorized: !pin });
  const pinned: buildConnector.connector = (opts, cb) =>
    base(opts, (err, socket) => {
      if (err || !socket || !pin) return err ? cb(err, null) : cb(null, socket as NonNullable<typeof socket>);
      const cert = (socket as TLSSocket).getPeerCertificate?.(false);
      const got = cert?.raw ? spkiPin(cert.raw) : '(no certificate)';
      if (got !== pin) {
        socket.destroy();
        return cb(new Error(`receiver key does not match pin_sha256 (got ${got})`), null);
      }
      cb(null, socket);
    });
  return new Agent({ connections: 4, keepAliveTimeout: 60_000, connect: guardConnector(pinned) });
}

export class WebhookTarget implements DeliveryTarget {
  readonly #s: WebhookSettings;
  readonly #origin: string;
  readonly #path: string;
  readonly #agent: Dispatcher;
  readonly #own: Agent | undefined;

  constructor(s: WebhookSettings) {
    this.#s = s;
    const url = new URL(s.endpoint);
    this.#origin = url.origin;
    this.#path = `${url.pathname}${url.search}`;
    const isPrivate = url.protocol === 'https:' && (s.caPem || s.pinSha256);
    this.#own = isPrivate || !s.shared ? privateAgent(isPrivate ? s.caPem : null, isPrivate ? s.pinSha256 : null, s.timeoutMs) : undefined;
    this.#agent = this.#own ?? (s.shared as Dispatcher);
  }

  async send(job: DeliveryJob): Promise<AttemptOutcome> {
    const refused = this.#s.egressRefusal ? await this.#s.egressRefusal(this.#s.endpoint) : null;
    if (refused) return { result: 'failed', error: refused };
    const { body, contentType } = renderCached(this.#s.sinkFormat, job.event, this.#s.version);
    const headers = {
      ...this.#s.authHeaders,
      'content-type': contentType,
      'user-agent': `svc-webhooks/${this.#s.version}`,
      ...webhookHeaders(this.#s.secrets(), job.event.id, body),
    };
    return this.post(body, headers);
  }

  async post(body: string, headers: Record<string, string>): Promise<AttemptOutcome> {
    const ac = new AbortController();
    const timer = setTimeout(() => ac.abort(), this.#s.timeoutMs);
    try {
      const res = await this.#agent.request({
        origin: this.#origin,
        path: this.#path,
        method: 'POST',
        headers,
        body,
        signal: ac.signal,
        headersTimeout: this.#s.timeoutMs,
        bodyTimeout: this.#s.timeoutMs,
      });
      // The answer's body is not read beyond draining it: any 2xx delivers (OTLP rule 2).
      res.body.dump().catch(() => undefined);
      return outcomeOf(res.statusCode, res.headers['retry-after']);
    } catch (err) {
      // the guard refused the destination at connect time: a failed attempt naming it, never retried
      const refused = egressRefusalOf(err);
      if (refused !== null) return { result: 'failed', error: `egress_refused: ${refused}` };
      if (ac.signal.aborted || (err as { code?: string }).code === 'UND_ERR_HEADERS_TIMEOUT')
        return { result: 'retry', error: `no answer within ${this.#s.timeoutMs} ms` };
      const e = err as Error & { cause?: Error };
      return {
        result: 'retry',
        error: `network: ${e.message}${e.cause?.message && e.cause.message !== e.message ? ` (${e.cause.message})` : ''}`,
      };
    } finally {
      clearTimeout(timer);
    }
  }

  close(): void {
    void this.#own?.destroy().catch(() => undefined);
  }
}
