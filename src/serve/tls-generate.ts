/**
 * Issues the self-signed ECDSA P-256 server certificate with @peculiar/x509 on Node's WebCrypto.
 * Loaded lazily by tls.ts: the X.509 builder (and its Reflect polyfill) is only needed on the
 * first start or a renewal, never on the hot path.
 */
import 'reflect-metadata';
import { createPrivateKey, createPublicKey, randomBytes, webcrypto } from 'node:crypto';
import * as x509 from '@peculiar/x509';
import type { SanSet } from './tls-names.js';

// Node's WebCrypto is structurally the DOM Crypto the library expects.
x509.cryptoProvider.set(webcrypto as unknown as Parameters<typeof x509.cryptoProvider.set>[0]);

type KeyPair = webcrypto.CryptoKeyPair;

const EC_P256 = { name: 'ECDSA', namedCurve: 'P-256', hash: 'SHA-256' } as const;
const DAY_MS = 86_400_000;

/** 397 days: the longest lifetime browsers accept for a server certificate (CA/B Forum BR §6.3.2). */
export const SELF_SIGNED_VALIDITY_DAYS = 397;
export const SELF_SIGNED_SUBJECT = 'CN=svc self-signed';

export interface IssueOptions {
  /** PKCS#8 (or SEC1) PEM of an existing P-256 key to re-certify, keeping its SPKI pin; omitted → new key. */
  keyPem?: string;
  sans: SanSet;
  notBefore?: Date;
  notAfter?: Date;
}

export interface IssuedCert {
  certPem: string;
  /** PKCS#8 PEM ("BEGIN PRIVATE KEY"). */
  keyPem: string;
}

/** Issue a self-signed server certificate (CA:false, digitalSignature, serverAuth) for the given SANs. */
export async function issueSelfSigned(opts: IssueOptions): Promise<IssuedCert> {
  const keys = opts.keyPem === undefined ? await newKeyPair() : await importKeyPair(opts.keyPem);
  // Leave five minutes for clocks that run behind ours.
  const notBefore = opts.notBefore ?? new Date(Date.now() - 5 * 60_000);
  const notAfter = opts.notAfter ?? new Date(notBefore.getTime() + SELF_SIGNED_VALIDITY_DAYS * DAY_MS);
  const names: x509.JsonGeneralName[] = [
    ...opts.sans.dns.map((value) => ({ type: 'dns' as const, value })),
    ...opts.sans.ips.map((value) => ({ type: 'ip' as const, value })),
  ];
  const cert = await x509.X509CertificateGenerator.createSelfSigned({
    serialNumber: randomSerial(),
    name: SELF_SIGNED_SUBJECT,
    notBefore,
    notAfter,
    signingAlgorithm: EC_P256,
    keys,
    extensions: [
      new x509.BasicConstraintsExtension(false, undefined, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.digitalSignature, true),
      new x509.ExtendedKeyUsageExtension([x509.ExtendedKeyUsage.serverAuth], false),
      new x509.SubjectAlternativeNameExtension(names, false),
      await x509.SubjectKeyIdentifierExtension.create(keys.publicKey),
    ],
  });
  const pkcs8 = Buffer.from(await webcrypto.subtle.exportKey('pkcs8', keys.privateKey));
  const keyPem = createPrivateKey({ key: pkcs8, format: 'der', type: 'pkcs8' }).export({ type: 'pkcs8', format: 'pem' });
  return { certPem: cert.toString('pem') + '\n', keyPem: String(keyPem) };
}

/** The SANs a certificate already carries, so a renewal for a new bind host keeps the old names. */
export function existingSans(certPem: string): SanSet {
  const cert = new x509.X509Certificate(certPem);
  const ext = cert.getExtension(x509.SubjectAlternativeNameExtension);
  const out: SanSet = { dns: [], ips: [] };
  for (const n of ext?.names.toJSON() ?? []) {
    if (n.type === 'dns') out.dns.push(n.value.toLowerCase());
    else if (n.type === 'ip') out.ips.push(n.value);
  }
  return out;
}

/** 16 random bytes, top bit clear so the DER INTEGER stays positive (RFC 5280 §4.1.2.2: ≤ 20 octets, positive). */
function randomSerial(): string {
  const b = randomBytes(16);
  b[0] = ((b[0] ?? 0) & 0x7f) | 0x01;
  return b.toString('hex');
}

async function newKeyPair(): Promise<KeyPair> {
  return (await webcrypto.subtle.generateKey(EC_P256, true, ['sign', 'verify'])) as KeyPair;
}

async function importKeyPair(keyPem: string): Promise<KeyPair> {
  const priv = createPrivateKey(keyPem);
  if (priv.asymmetricKeyType !== 'ec' || priv.asymmetricKeyDetails?.namedCurve !== 'prime256v1') {
    throw new Error('the existing key is not an ECDSA P-256 key');
  }
  const pkcs8 = priv.export({ type: 'pkcs8', format: 'der' });
  const spki = createPublicKey(priv).export({ type: 'spki', format: 'der' });
  const privateKey = await webcrypto.subtle.importKey('pkcs8', pkcs8, EC_P256, true, ['sign']);
  const publicKey = await webcrypto.subtle.importKey('spki', spki, EC_P256, true, ['verify']);
  return { privateKey, publicKey } as KeyPair;
}
