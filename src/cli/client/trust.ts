import { X509Certificate } from 'node:crypto';
import { rootCertificates, TLSSocket } from 'node:tls';
import { buildConnector } from 'undici';
import { TransportError } from './errors.js';
import { spkiSha256 } from './pins.js';

/** The trust inputs of a connection to the server. */
export type TrustOptions = {
  caCertPem: string | undefined;
  pins: Buffer[];
  insecure: boolean;
  timeoutMs: number;
};

/**
 * Builds the undici connector that enforces our trust rules, in this order of strength:
 *
 * - `--insecure`: no verification at all (the caller prints a warning).
 * - `--pin-sha256` without `--ca-cert`: the chain and host name are NOT validated; instead the
 *   leaf's SubjectPublicKeyInfo SHA-256 must equal one of the pins (RFC 7469 §2.4 pin semantics,
 *   the same digest `svc serve` logs as `pin_sha256`). This is what lets a client trust the
 *   server's self-signed certificate (spec "Secure defaults" 9: trust the certificate or pass the
 *   pin). Checked on `secureConnect`, before undici writes a single request byte; on mismatch the
 *   socket is destroyed and the request fails with `tls_pin_mismatch`.
 * - `--ca-cert`: normal chain + host name validation, against the system store plus that PEM.
 * - both: chain validation against system + PEM AND the pin must match.
 * - neither: the system store only.
 *
 * TLS session caching is off when pinning so every connection presents its certificate anew.
 */
export function buildTrustedConnector(options: TrustOptions): buildConnector.connector {
  const pinning = options.pins.length > 0 && !options.insecure;
  const verifyChain = !options.insecure && !(pinning && options.caCertPem === undefined);
  const base = buildConnector({
    // An explicit `ca` replaces Node's default store, so the system roots are added back in.
    ...(options.caCertPem !== undefined ? { ca: [...rootCertificates, options.caCertPem] } : {}),
    rejectUnauthorized: verifyChain,
    timeout: options.timeoutMs,
    ...(pinning ? { maxCachedSessions: 0 } : {}),
  });
  if (!pinning) return base;
  return (connectOptions, callback) => {
    base(connectOptions, (err, socket) => {
      if (err !== null) {
        callback(err, null);
        return;
      }
      if (!(socket instanceof TLSSocket)) {
        // Plain http: there is no certificate to pin (pins only apply to https:// servers).
        callback(null, socket);
        return;
      }
      const actual = leafSpkiSha256(socket);
      if (actual !== undefined && options.pins.some((pin) => pin.equals(actual))) {
        callback(null, socket);
        return;
      }
      socket.destroy();
      const seen = actual === undefined ? 'no certificate' : `pin_sha256 ${actual.toString('base64')}`;
      callback(
        new TransportError('tls_pin_mismatch', `server certificate does not match any --pin-sha256 (server presented ${seen})`),
        null,
      );
    });
  };
}

/**
 * SHA-256 of the peer leaf's DER SubjectPublicKeyInfo. Taken from the certificate's DER through
 * X509Certificate, not from `getPeerCertificate().pubkey`, which for EC keys is the bare point.
 */
function leafSpkiSha256(socket: TLSSocket): Buffer | undefined {
  const raw = socket.getPeerCertificate().raw as Buffer | undefined;
  if (raw === undefined || raw.length === 0) return undefined;
  return spkiSha256(new X509Certificate(raw).publicKey.export({ type: 'spki', format: 'der' }));
}
