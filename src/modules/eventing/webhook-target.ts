/**
 * The webhook target: one signed HTTPS POST per attempt (Standard Webhooks headers), over a
 * keep-alive agent of its own (a subscription's CA bundle or pin applies to it alone). Redirects
 * are never followed (a 3xx is `failed`); the attempt times out after the subscription's timeout
 * (default 10 s). 2xx delivers; network errors, timeouts, 408, 425, 429 and 5xx retry (with the
 * receiver's `Retry-After`); any other status fails at once.
 */
import { createHash, X509Certificate } from 'node:crypto';
import http from 'node:http';
import https from 'node:https';
import type { PeerCertificate, TLSSocket } from 'node:tls';
import { parseRetryAfter } from '../../events/delivery/ladder.js';
import { webhookHeaders } from '../../events/delivery/signature.js';
import type { AttemptOutcome, DeliveryJob, DeliveryTarget } from '../../events/delivery/target.js';
import { render } from './render.js';

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
}

// Sockets whose receiver key matched the pin (keep-alive reuses them without a new handshake).
const pinned = new WeakSet<TLSSocket>();

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

function spkiPin(cert: PeerCertificate): string {
  const spki = new X509Certificate(cert.raw).publicKey.export({ type: 'spki', format: 'der' });
  return createHash('sha256').update(spki).digest('base64');
}

export class WebhookTarget implements DeliveryTarget {
  readonly #s: WebhookSettings;
  readonly #url: URL;
  readonly #agent: http.Agent;

  constructor(s: WebhookSettings) {
    this.#s = s;
    this.#url = new URL(s.endpoint);
    const pin = s.pinSha256;
    this.#agent =
      this.#url.protocol === 'https:'
        ? new https.Agent({
            keepAlive: true,
            maxSockets: 4,
            ...(s.caPem ? { ca: s.caPem } : {}),
            // A pinned receiver is trusted by its key alone (a private receiver with a self-signed
            // certificate): the chain is not checked, the key is, before any byte of the body goes out.
            ...(pin ? { rejectUnauthorized: false } : {}),
          })
        : new http.Agent({ keepAlive: true, maxSockets: 4 });
  }

  async send(job: DeliveryJob): Promise<AttemptOutcome> {
    const { body, contentType } = render(this.#s.sinkFormat, job.event, this.#s.version);
    const headers = { ...this.#s.authHeaders, 'content-type': contentType, 'user-agent': `svc-webhooks/${this.#s.version}`, ...webhookHeaders(this.#s.secrets(), job.event.id, body) };
    return this.post(body, headers);
  }

  post(body: string, headers: Record<string, string>): Promise<AttemptOutcome> {
    const mod = this.#url.protocol === 'https:' ? https : http;
    return new Promise<AttemptOutcome>((resolve) => {
      let settled = false;
      const done = (o: AttemptOutcome): void => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        resolve(o);
      };
      const req = mod.request(this.#url, { method: 'POST', agent: this.#agent, headers: { ...headers, 'content-length': String(Buffer.byteLength(body)) } }, (res) => {
        // The answer's body is not read beyond draining it: any 2xx delivers (OTLP rule 2).
        res.resume();
        res.on('error', () => undefined);
        done(outcomeOf(res.statusCode ?? 0, res.headers['retry-after']));
      });
      const timer = setTimeout(() => {
        done({ result: 'retry', error: `no answer within ${this.#s.timeoutMs} ms` });
        req.destroy();
      }, this.#s.timeoutMs);
      req.on('error', (err) => done({ result: 'retry', error: `network: ${err.message}` }));
      const pin = this.#s.pinSha256;
      if (!pin || this.#url.protocol !== 'https:') {
        req.end(body);
        return;
      }
      req.on('socket', (socket) => {
        const tls = socket as TLSSocket;
        const check = (): void => {
          if (pinned.has(tls)) return void req.end(body);
          const got = spkiPin(tls.getPeerCertificate(false));
          if (got !== pin) {
            done({ result: 'retry', error: `receiver key does not match pin_sha256 (got ${got})` });
            req.destroy();
            return;
          }
          pinned.add(tls);
          req.end(body);
        };
        if (pinned.has(tls) || tls.encrypted && !tls.connecting && tls.getPeerCertificate(false)?.raw) check();
        else tls.once('secureConnect', check);
      });
    });
  }

  close(): void {
    this.#agent.destroy();
  }
}
