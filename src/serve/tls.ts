/**
 * TLS material for `svc serve` (spec §"svc serve": TLS on by default). Either the operator's own
 * certificate and key (`--tls-cert`/`--tls-key`), checked before the listener starts, or a
 * self-signed ECDSA P-256 certificate generated once into `<dataDir>/tls/` and reused.
 */
import { X509Certificate, createHash, createPrivateKey, type KeyObject } from 'node:crypto';
import { chmod } from 'node:fs/promises';
import { isIP } from 'node:net';
import { join, resolve } from 'node:path';
import {
  TlsError,
  assertPrivateKeyMode,
  ensurePrivateDir,
  looseBits,
  readIfExists,
  readPemFile,
  writeFileAtomic,
} from './tls-files.js';
import { isWildcardHost, missingSans, normaliseHost, requiredSans, type SanSet } from './tls-names.js';

export { TlsError, type TlsErrorCode } from './tls-files.js';

export interface TlsMaterial {
  /** Full PEM as served: the leaf first, then any chain certificates from the operator's file. */
  certPem: string;
  keyPem: string;
  certPath: string;
  keyPath: string;
  /** SHA-256 of the leaf certificate DER, colon-separated uppercase hex (as `openssl x509 -fingerprint -sha256`). */
  fingerprintSha256: string;
  /** base64 SHA-256 of the leaf SubjectPublicKeyInfo DER (RFC 7469 §2.4), the `pin_sha256` clients pass. */
  pinSha256: string;
  /** True when this call wrote a new certificate (first start or renewal). */
  generated: boolean;
  selfSigned: boolean;
  /** ISO 8601 end of validity of the leaf. */
  notAfter: string;
  /** What happened: created (none on disk), reused, reissued (replaced, see reason), loaded (operator files). */
  action: 'created' | 'reused' | 'reissued' | 'loaded';
  /** Why the certificate was created or reissued, for the startup log. */
  reason?: string;
  /** Non-fatal problems worth a warning log line (bind host not covered, near expiry, permissions fixed). */
  warnings: string[];
  /** SAN entries of the leaf as OpenSSL prints them (e.g. `DNS:localhost`, `IP Address:127.0.0.1`). */
  subjectAltNames: string[];
}

export interface LoadTlsOptions {
  dataDir: string;
  certFile?: string;
  keyFile?: string;
  /** Bind hosts of the listeners; each becomes a SAN of the self-signed certificate. */
  hosts: string[];
}

const DAY_MS = 86_400_000;
/** Warn this long before the operator's certificate expires. */
const EXPIRY_WARNING_DAYS = 30;
const PEM_CERT = /-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g;

/** Load the operator's certificate and key, or create/reuse the self-signed pair in `<dataDir>/tls/`. */
export async function loadOrCreateTls(opts: LoadTlsOptions): Promise<TlsMaterial> {
  const hasCert = opts.certFile !== undefined && opts.certFile !== '';
  const hasKey = opts.keyFile !== undefined && opts.keyFile !== '';
  if (hasCert !== hasKey) {
    throw new TlsError(
      'tls_pair_incomplete',
      `a TLS certificate and its private key must be supplied together (--tls-cert and --tls-key); got only the ` +
        `${hasCert ? 'certificate' : 'key'}`,
      hasCert ? opts.certFile : opts.keyFile,
    );
  }
  if (hasCert && hasKey) return loadSupplied(resolve(opts.certFile as string), resolve(opts.keyFile as string), opts.hosts);
  return loadOrCreateSelfSigned(resolve(opts.dataDir), opts.hosts);
}

/** base64 SHA-256 of the leaf certificate's SubjectPublicKeyInfo DER: the RFC 7469 pin (`curl --pinnedpubkey sha256//…`). */
export function spkiPinSha256(certPem: string): string {
  const spki = leafCertificate(certPem).publicKey.export({ type: 'spki', format: 'der' });
  return createHash('sha256').update(spki).digest('base64');
}

/** SHA-256 of the whole leaf certificate DER as colon-separated uppercase hex, the format `openssl x509 -fingerprint -sha256` prints. */
export function certFingerprintSha256(certPem: string): string {
  const hex = createHash('sha256').update(leafCertificate(certPem).raw).digest('hex').toUpperCase();
  return hex.match(/../g)!.join(':');
}

async function loadSupplied(certPath: string, keyPath: string, hosts: readonly string[]): Promise<TlsMaterial> {
  const certPem = await readPemFile(certPath, 'certificate');
  const keyPem = await readPemFile(keyPath, 'private key');
  await assertPrivateKeyMode(keyPath);
  const chain = parseCertificates(certPem, certPath);
  const leaf = chain[0] as X509Certificate;
  const key = parsePrivateKey(keyPem, keyPath);
  if (!leaf.checkPrivateKey(key)) {
    throw new TlsError(
      'tls_key_mismatch',
      `TLS private key ${keyPath} does not match the certificate in ${certPath}: the key's public half differs from the leaf's public key`,
      keyPath,
    );
  }
  const now = Date.now();
  const validFrom = Date.parse(leaf.validFrom);
  const validTo = Date.parse(leaf.validTo);
  if (now >= validTo) {
    throw new TlsError('tls_cert_expired', `TLS certificate ${certPath} expired on ${new Date(validTo).toISOString()}`, certPath);
  }
  if (now < validFrom) {
    throw new TlsError(
      'tls_cert_expired',
      `TLS certificate ${certPath} is not valid before ${new Date(validFrom).toISOString()}`,
      certPath,
    );
  }
  const warnings: string[] = [];
  // Only the concrete bind hosts: an operator's certificate need not name localhost, and a
  // wildcard bind is reached by names we cannot guess.
  const concrete = hosts.filter((h) => !isWildcardHost(h)).map(normaliseHost);
  const uncovered = missingSans(leaf, splitHosts(concrete));
  if (uncovered.length > 0) {
    warnings.push(
      `TLS certificate ${certPath} does not cover bind host(s) ${uncovered.join(', ')}; clients connecting by that name will fail ` +
        `verification`,
    );
  }
  if (validTo - now < EXPIRY_WARNING_DAYS * DAY_MS) {
    warnings.push(`TLS certificate ${certPath} expires on ${new Date(validTo).toISOString()}`);
  }
  return material({ certPem, keyPem, certPath, keyPath, leaf, generated: false, action: 'loaded', warnings });
}

async function loadOrCreateSelfSigned(dataDir: string, hosts: readonly string[]): Promise<TlsMaterial> {
  const dir = join(dataDir, 'tls');
  const certPath = join(dir, 'cert.pem');
  const keyPath = join(dir, 'key.pem');
  const want = requiredSans(hosts);
  await ensurePrivateDir(dir);
  const [certPem, keyPem] = await Promise.all([readIfExists(certPath), readIfExists(keyPath)]);
  const warnings: string[] = [];

  if (certPem === undefined && keyPem === undefined) {
    return issueAndWrite({ certPath, keyPath, sans: want, action: 'created', reason: `no certificate in ${dir}`, warnings });
  }

  const problems: string[] = [];
  let key: KeyObject | undefined;
  let leaf: X509Certificate | undefined;
  if (keyPem === undefined) problems.push('key.pem is missing');
  else {
    try {
      key = parsePrivateKey(keyPem, keyPath);
    } catch {
      problems.push('key.pem is not a readable private key');
    }
  }
  if (certPem === undefined) problems.push('cert.pem is missing');
  else {
    try {
      leaf = parseCertificates(certPem, certPath)[0];
    } catch {
      problems.push('cert.pem is not a readable certificate');
    }
  }
  if (leaf !== undefined) {
    if (key !== undefined && !leaf.checkPrivateKey(key)) problems.push('cert.pem does not match key.pem');
    const now = Date.now();
    if (now >= Date.parse(leaf.validTo)) problems.push(`the certificate expired on ${new Date(leaf.validTo).toISOString()}`);
    else if (now < Date.parse(leaf.validFrom))
      problems.push(`the certificate is not valid before ${new Date(leaf.validFrom).toISOString()}`);
    const uncovered = missingSans(leaf, want);
    if (uncovered.length > 0) problems.push(`the certificate does not cover ${uncovered.join(', ')}, needed for the bind hosts`);
  }

  if (problems.length === 0 && leaf !== undefined && certPem !== undefined && keyPem !== undefined) {
    if ((await looseBits(keyPath)) !== 0) {
      await chmod(keyPath, 0o600);
      warnings.push(
        `${keyPath} was accessible by group/other users; its mode was reset to 0600 (treat the key as exposed and delete ${dir} to ` +
          `rotate it)`,
      );
    }
    return material({ certPem, keyPem, certPath, keyPath, leaf, generated: false, action: 'reused', warnings });
  }

  // Renew with the same key when it is a usable P-256 key: the SPKI pin clients hold survives a
  // renewal or a new bind host; only the fingerprint changes.
  const keepKey = key !== undefined && key.asymmetricKeyType === 'ec' && key.asymmetricKeyDetails?.namedCurve === 'prime256v1';
  let sans = want;
  if (leaf !== undefined && certPem !== undefined) {
    const { existingSans } = await import('./tls-generate.js');
    sans = unionSans(existingSans(certPem), want);
  }
  const reason = `${problems.join('; ')}; ${keepKey ? 'reissued with the same key (pin unchanged)' : 'generated a new key (pin changed)'}`;
  return issueAndWrite({ certPath, keyPath, sans, keyPem: keepKey ? keyPem : undefined, action: 'reissued', reason, warnings });
}

interface IssueAndWrite {
  certPath: string;
  keyPath: string;
  sans: SanSet;
  keyPem?: string | undefined;
  action: 'created' | 'reissued';
  reason: string;
  warnings: string[];
}

async function issueAndWrite(o: IssueAndWrite): Promise<TlsMaterial> {
  const { issueSelfSigned } = await import('./tls-generate.js');
  const issued = await issueSelfSigned({ keyPem: o.keyPem, sans: o.sans });
  // Key before certificate: a crash in between leaves a mismatched pair, which the next start
  // detects and repairs by reissuing the certificate for the key on disk.
  if (o.keyPem === undefined) await writeFileAtomic(o.keyPath, issued.keyPem, 0o600);
  else await chmod(o.keyPath, 0o600);
  await writeFileAtomic(o.certPath, issued.certPem, 0o644);
  const leaf = new X509Certificate(issued.certPem);
  return material({
    certPem: issued.certPem,
    keyPem: o.keyPem ?? issued.keyPem,
    certPath: o.certPath,
    keyPath: o.keyPath,
    leaf,
    generated: true,
    action: o.action,
    reason: o.reason,
    warnings: o.warnings,
  });
}

interface MaterialParts {
  certPem: string;
  keyPem: string;
  certPath: string;
  keyPath: string;
  leaf: X509Certificate;
  generated: boolean;
  action: TlsMaterial['action'];
  reason?: string;
  warnings: string[];
}

function material(p: MaterialParts): TlsMaterial {
  const out: TlsMaterial = {
    certPem: p.certPem,
    keyPem: p.keyPem,
    certPath: p.certPath,
    keyPath: p.keyPath,
    fingerprintSha256: certFingerprintSha256(p.certPem),
    pinSha256: spkiPinSha256(p.certPem),
    generated: p.generated,
    selfSigned: isSelfSigned(p.leaf),
    notAfter: new Date(p.leaf.validTo).toISOString(),
    action: p.action,
    warnings: p.warnings,
    subjectAltNames: (p.leaf.subjectAltName ?? '').split(', ').filter((s) => s !== ''),
  };
  if (p.reason !== undefined) out.reason = p.reason;
  return out;
}

/** Issuer equals subject and the certificate verifies under its own key (RFC 5280 §3.2 self-signed). */
function isSelfSigned(cert: X509Certificate): boolean {
  return cert.issuer === cert.subject && cert.verify(cert.publicKey);
}

function leafCertificate(certPem: string): X509Certificate {
  const first = certPem.match(PEM_CERT)?.[0];
  if (first === undefined) throw new Error('no PEM certificate block found');
  return new X509Certificate(first);
}

/** Every certificate in a PEM file, leaf first; errors name the file. */
function parseCertificates(pem: string, path: string): X509Certificate[] {
  const blocks = pem.match(PEM_CERT) ?? [];
  if (blocks.length === 0) {
    throw new TlsError('tls_cert_invalid', `TLS certificate file ${path} contains no "BEGIN CERTIFICATE" PEM block`, path);
  }
  return blocks.map((block, i) => {
    try {
      return new X509Certificate(block);
    } catch (err) {
      throw new TlsError(
        'tls_cert_invalid',
        `TLS certificate file ${path}: certificate #${i + 1} cannot be parsed (${(err as Error).message})`,
        path,
      );
    }
  });
}

function parsePrivateKey(pem: string, path: string): KeyObject {
  try {
    return createPrivateKey(pem);
  } catch (err) {
    const e = err as NodeJS.ErrnoException;
    if (e.code === 'ERR_MISSING_PASSPHRASE') {
      throw new TlsError(
        'tls_key_invalid',
        `TLS private key ${path} is encrypted; svc needs an unencrypted key (decrypt it with: openssl pkey -in ${path} -out <new ` +
          `file>, then chmod 600 it)`,
        path,
      );
    }
    throw new TlsError('tls_key_invalid', `TLS private key file ${path} cannot be parsed (${e.message})`, path);
  }
}

function splitHosts(hosts: readonly string[]): SanSet {
  const out: SanSet = { dns: [], ips: [] };
  for (const h of hosts) (isIP(h) !== 0 ? out.ips : out.dns).push(h);
  return out;
}

function unionSans(a: SanSet, b: SanSet): SanSet {
  return { dns: [...new Set([...a.dns, ...b.dns])], ips: [...new Set([...a.ips, ...b.ips])] };
}
