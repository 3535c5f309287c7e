/** One GET on a fresh connection, reporting the peer certificate; used for readiness and for copying svc's bodies into the baselines. */
import { request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { TLSSocket } from 'node:tls';

export interface GetResult {
  status: number;
  headers: IncomingHttpHeaders;
  body: string;
  /** SHA-256 fingerprint of the served leaf certificate (HTTPS only) */
  peerFingerprint256?: string;
}

export interface GetOptions {
  /** trust exactly this PEM; when absent the certificate is not verified (readiness polling only) */
  ca?: string;
  timeoutMs?: number;
}

/** GET `url` on its own connection (no agent reuse), rejecting on network errors and timeouts. */
export function getOnce(url: string, opts: GetOptions = {}): Promise<GetResult> {
  const u = new URL(url);
  const isTls = u.protocol === 'https:';
  return new Promise((resolve, reject) => {
    const tlsOpts = isTls ? (opts.ca ? { ca: opts.ca, rejectUnauthorized: true } : { rejectUnauthorized: false }) : {};
    const req = (isTls ? httpsRequest : httpRequest)(
      u,
      { method: 'GET', agent: false, timeout: opts.timeoutMs ?? 3_000, ...tlsOpts },
      (res) => {
        const chunks: Buffer[] = [];
        const peer = isTls ? (res.socket as TLSSocket).getPeerCertificate?.()?.fingerprint256 : undefined;
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const out: GetResult = { status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString('utf8') };
          if (peer) out.peerFingerprint256 = peer;
          resolve(out);
        });
        res.on('error', reject);
      },
    );
    req.on('timeout', () => req.destroy(new Error(`GET ${url} timed out`)));
    req.on('error', reject);
    req.end();
  });
}
