import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { X509Certificate, createHash, createPrivateKey, createPublicKey } from 'node:crypto';
import { chmod, mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { createServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { TlsError, certFingerprintSha256, loadOrCreateTls, spkiPinSha256, type TlsMaterial } from '../../src/serve/tls.js';
import { issueSelfSigned } from '../../src/serve/tls-generate.js';
import { requiredSans } from '../../src/serve/tls-names.js';

const run = promisify(execFile);

/** Run a CLI tool; resolves with its exit code and output instead of throwing on non-zero. */
async function tool(cmd: string, args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await run(cmd, args, { encoding: 'utf8', timeout: 15_000 });
    return { code: 0, stdout, stderr };
  } catch (err) {
    const e = err as { code?: number | string; stdout?: string; stderr?: string };
    return { code: typeof e.code === 'number' ? e.code : -1, stdout: e.stdout ?? '', stderr: e.stderr ?? String(err) };
  }
}

/** Pipe through a shell: the openssl pin recipe is a pipeline, kept verbatim as operators type it. */
async function sh(script: string): Promise<string> {
  const { stdout } = await run('sh', ['-c', script], { encoding: 'utf8', timeout: 15_000 });
  return stdout.trim();
}

async function tempDir(t: { after: (fn: () => Promise<void>) => void }): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'svc-tls-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

/** An independent certificate/key pair made by the openssl CLI (self-signed, P-256 unless told). */
async function opensslPair(
  dir: string,
  name: string,
  keyAlg: string[] = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256'],
): Promise<{ cert: string; key: string }> {
  const cert = join(dir, `${name}.crt`);
  const key = join(dir, `${name}.key`);
  const r = await tool('openssl', [
    'req',
    '-x509',
    ...keyAlg,
    '-nodes',
    '-subj',
    `/CN=${name}`,
    '-days',
    '30',
    '-addext',
    'subjectAltName=DNS:localhost,IP:127.0.0.1',
    '-keyout',
    key,
    '-out',
    cert,
  ]);
  assert.equal(r.code, 0, r.stderr);
  await chmod(key, 0o600);
  return { cert, key };
}

const mode = async (p: string): Promise<number> => (await stat(p)).mode & 0o777;

test('first start generates a self-signed ECDSA P-256 server certificate into <dataDir>/tls', async (t) => {
  const dataDir = await tempDir(t);
  const m = await loadOrCreateTls({ dataDir, hosts: ['127.0.0.1', 'svc.example.test', '192.0.2.10'] });
  assert.equal(m.generated, true);
  assert.equal(m.action, 'created');
  assert.equal(m.selfSigned, true);
  assert.equal(m.certPath, join(dataDir, 'tls', 'cert.pem'));
  assert.equal(m.keyPath, join(dataDir, 'tls', 'key.pem'));
  assert.equal(await readFile(m.certPath, 'utf8'), m.certPem);
  assert.equal(await readFile(m.keyPath, 'utf8'), m.keyPem);
  assert.equal(await mode(join(dataDir, 'tls')), 0o700);
  assert.equal(await mode(m.keyPath), 0o600);

  const cert = new X509Certificate(m.certPem);
  assert.equal(cert.subject, 'CN=svc self-signed');
  assert.equal(cert.publicKey.asymmetricKeyType, 'ec');
  assert.equal(cert.publicKey.asymmetricKeyDetails?.namedCurve, 'prime256v1');
  assert.ok(cert.checkPrivateKey(createPrivateKey(m.keyPem)));
  const days = (Date.parse(cert.validTo) - Date.now()) / 86_400_000;
  assert.ok(days > 390 && days <= 398, `validity ${days} days`);
  assert.equal(m.notAfter, new Date(cert.validTo).toISOString());

  const sans = (cert.subjectAltName ?? '').split(', ');
  for (const want of [
    'DNS:localhost',
    'IP Address:127.0.0.1',
    'IP Address:0:0:0:0:0:0:0:1',
    'DNS:svc.example.test',
    'IP Address:192.0.2.10',
  ]) {
    assert.ok(sans.includes(want), `${want} missing from ${cert.subjectAltName}`);
  }

  // Extensions as OpenSSL itself reads them.
  const ext = await tool('openssl', ['x509', '-in', m.certPath, '-noout', '-ext', 'basicConstraints,keyUsage,extendedKeyUsage']);
  assert.equal(ext.code, 0, ext.stderr);
  assert.match(ext.stdout, /Basic Constraints: critical\s+CA:FALSE/);
  assert.match(ext.stdout, /Key Usage: critical\s+Digital Signature\s*\n/);
  assert.match(ext.stdout, /Extended Key Usage:\s*\n\s+TLS Web Server Authentication\s*\n/);
  assert.equal((await tool('openssl', ['pkey', '-in', m.keyPath, '-check', '-noout'])).code, 0);
});

test('a wildcard bind adds the machine name, never 0.0.0.0 or ::', async (t) => {
  const m = await loadOrCreateTls({ dataDir: await tempDir(t), hosts: ['0.0.0.0', '[::]'] });
  const cert = new X509Certificate(m.certPem);
  const name = hostname().toLowerCase();
  if (/^[a-z0-9.-]+$/.test(name)) assert.ok(cert.checkHost(name, { subject: 'never' }), `${name} not in ${cert.subjectAltName}`);
  assert.ok(cert.checkIP('127.0.0.1') && cert.checkIP('::1'));
  assert.equal(cert.checkIP('0.0.0.0'), undefined);
  assert.equal(cert.checkIP('::'), undefined);
});

test('bind hosts map to SANs: brackets and zones stripped, wildcards become the machine name', () => {
  assert.deepEqual(requiredSans(['127.0.0.1', '127.0.0.1'], 'box'), { dns: ['localhost'], ips: ['127.0.0.1', '::1'] });
  assert.deepEqual(requiredSans(['[fe80::1%eth0]', 'API.Example.TEST.', '10.0.0.5'], 'box'), {
    dns: ['localhost', 'api.example.test'],
    ips: ['127.0.0.1', '::1', 'fe80::1', '10.0.0.5'],
  });
  for (const wildcard of ['0.0.0.0', '::', '[::]', '0:0:0:0:0:0:0:0', '']) {
    assert.deepEqual(
      requiredSans([wildcard], 'Build-01.example.test'),
      { dns: ['localhost', 'build-01.example.test'], ips: ['127.0.0.1', '::1'] },
      wildcard,
    );
  }
  // A machine name that is not a DNS name cannot be a dNSName SAN (RFC 5280 §4.2.1.6): left out.
  assert.deepEqual(requiredSans(['0.0.0.0'], 'bad_name'), { dns: ['localhost'], ips: ['127.0.0.1', '::1'] });
  assert.throws(() => requiredSans(['not a host'], 'box'), /neither an IP address nor a DNS name/);
});

test('later starts reuse the certificate; serials differ between data directories', async (t) => {
  const dataDir = await tempDir(t);
  const first = await loadOrCreateTls({ dataDir, hosts: ['127.0.0.1'] });
  const before = await stat(first.certPath);
  const again = await loadOrCreateTls({ dataDir, hosts: ['127.0.0.1', 'localhost', '::1'] });
  assert.equal(again.generated, false);
  assert.equal(again.action, 'reused');
  assert.equal(again.certPem, first.certPem);
  assert.equal(again.keyPem, first.keyPem);
  assert.equal(again.fingerprintSha256, first.fingerprintSha256);
  assert.equal((await stat(first.certPath)).mtimeMs, before.mtimeMs);

  const other = await loadOrCreateTls({ dataDir: await tempDir(t), hosts: ['127.0.0.1'] });
  assert.notEqual(new X509Certificate(other.certPem).serialNumber, new X509Certificate(first.certPem).serialNumber);
  assert.notEqual(other.pinSha256, first.pinSha256);
});

test('a new bind host reissues the certificate with the same key, keeping old SANs and the pin', async (t) => {
  const dataDir = await tempDir(t);
  const first = await loadOrCreateTls({ dataDir, hosts: ['192.0.2.10'] });
  const next = await loadOrCreateTls({ dataDir, hosts: ['198.51.100.7', 'api.example.test'] });
  assert.equal(next.action, 'reissued');
  assert.equal(next.generated, true);
  assert.match(next.reason ?? '', /198\.51\.100\.7/);
  assert.match(next.reason ?? '', /api\.example\.test/);
  assert.match(next.reason ?? '', /same key/);
  assert.equal(next.pinSha256, first.pinSha256);
  assert.notEqual(next.fingerprintSha256, first.fingerprintSha256);
  const cert = new X509Certificate(await readFile(next.certPath, 'utf8'));
  for (const ip of ['192.0.2.10', '198.51.100.7', '127.0.0.1', '::1']) assert.ok(cert.checkIP(ip), ip);
  assert.ok(cert.checkHost('api.example.test', { subject: 'never' }));
  assert.ok(cert.checkPrivateKey(createPrivateKey(await readFile(next.keyPath, 'utf8'))));
});

test('an expired certificate on disk is renewed', async (t) => {
  const dataDir = await tempDir(t);
  const first = await loadOrCreateTls({ dataDir, hosts: ['127.0.0.1'] });
  const expired = await issueSelfSigned({
    keyPem: first.keyPem,
    sans: { dns: ['localhost'], ips: ['127.0.0.1', '::1'] },
    notBefore: new Date(Date.now() - 10 * 86_400_000),
    notAfter: new Date(Date.now() - 86_400_000),
  });
  await writeFile(first.certPath, expired.certPem);
  assert.equal((await tool('openssl', ['x509', '-in', first.certPath, '-noout', '-checkend', '0'])).code, 1, 'fixture must be expired');

  const renewed = await loadOrCreateTls({ dataDir, hosts: ['127.0.0.1'] });
  assert.equal(renewed.action, 'reissued');
  assert.match(renewed.reason ?? '', /expired/);
  assert.equal(renewed.pinSha256, first.pinSha256);
  assert.equal((await tool('openssl', ['x509', '-in', renewed.certPath, '-noout', '-checkend', String(300 * 86_400)])).code, 0);
});

test('a cert.pem that does not match key.pem is reissued for the key on disk', async (t) => {
  const dataDir = await tempDir(t);
  const mine = await loadOrCreateTls({ dataDir, hosts: ['127.0.0.1'] });
  const foreign = await loadOrCreateTls({ dataDir: await tempDir(t), hosts: ['127.0.0.1'] });
  await writeFile(mine.certPath, foreign.certPem);
  const fixed = await loadOrCreateTls({ dataDir, hosts: ['127.0.0.1'] });
  assert.equal(fixed.action, 'reissued');
  assert.match(fixed.reason ?? '', /does not match/);
  const keySpki = createPublicKey(createPrivateKey(mine.keyPem)).export({ type: 'spki', format: 'der' });
  assert.equal(fixed.pinSha256, createHash('sha256').update(keySpki).digest('base64'));
  assert.equal(fixed.pinSha256, mine.pinSha256);
});

test('garbage in the data directory is replaced by a fresh pair', async (t) => {
  const dataDir = await tempDir(t);
  const first = await loadOrCreateTls({ dataDir, hosts: ['127.0.0.1'] });
  await writeFile(first.keyPath, 'not a key');
  await writeFile(first.certPath, 'not a cert');
  const fresh = await loadOrCreateTls({ dataDir, hosts: ['127.0.0.1'] });
  assert.equal(fresh.action, 'reissued');
  assert.match(fresh.reason ?? '', /new key/);
  assert.notEqual(fresh.pinSha256, first.pinSha256);
  assert.equal(await mode(fresh.keyPath), 0o600);
  assert.ok(new X509Certificate(await readFile(fresh.certPath)).checkPrivateKey(createPrivateKey(await readFile(fresh.keyPath, 'utf8'))));
});

test('a generated key left group/world-readable is reset to 0600 with a warning', async (t) => {
  const dataDir = await tempDir(t);
  const first = await loadOrCreateTls({ dataDir, hosts: ['127.0.0.1'] });
  await chmod(first.keyPath, 0o644);
  const again = await loadOrCreateTls({ dataDir, hosts: ['127.0.0.1'] });
  assert.equal(again.action, 'reused');
  assert.equal(await mode(first.keyPath), 0o600);
  assert.match(again.warnings.join('\n'), /0600/);
});

test('an operator certificate and key made by openssl are loaded and checked', async (t) => {
  const dir = await tempDir(t);
  const pair = await opensslPair(dir, 'own');
  const m = await loadOrCreateTls({
    dataDir: join(dir, 'data'),
    certFile: pair.cert,
    keyFile: pair.key,
    hosts: ['127.0.0.1', 'svc.internal.test'],
  });
  assert.equal(m.action, 'loaded');
  assert.equal(m.generated, false);
  assert.equal(m.selfSigned, true);
  assert.equal(m.certPath, pair.cert);
  assert.equal(m.keyPath, pair.key);
  assert.match(m.warnings.join('\n'), /does not cover bind host\(s\) svc\.internal\.test/);
  assert.match(m.warnings.join('\n'), /expires on/); // 30-day certificate
  await assert.rejects(stat(join(dir, 'data', 'tls')), /ENOENT/, 'no self-signed material is written when the operator supplies a pair');
});

test('an operator key that does not belong to the certificate is refused, naming both files', async (t) => {
  const dir = await tempDir(t);
  const a = await opensslPair(dir, 'a');
  const b = await opensslPair(dir, 'b');
  await assert.rejects(
    loadOrCreateTls({ dataDir: dir, certFile: a.cert, keyFile: b.key, hosts: ['127.0.0.1'] }),
    (err: unknown) => {
      assert.ok(err instanceof TlsError);
      assert.equal(err.code, 'tls_key_mismatch');
      assert.equal(err.file, b.key);
      assert.ok(err.message.includes(b.key) && err.message.includes(a.cert), err.message);
      return true;
    },
  );
});

test('an operator key readable by group or world is refused with the chmod fix', async (t) => {
  const dir = await tempDir(t);
  const pair = await opensslPair(dir, 'loose');
  for (const bits of [0o644, 0o640, 0o604]) {
    await chmod(pair.key, bits);
    await assert.rejects(loadOrCreateTls({ dataDir: dir, certFile: pair.cert, keyFile: pair.key, hosts: [] }), (err: unknown) => {
      assert.ok(err instanceof TlsError);
      assert.equal(err.code, 'tls_key_permissions');
      assert.ok(err.message.includes(`chmod 600 ${pair.key}`), err.message);
      return true;
    });
  }
  await chmod(pair.key, 0o400);
  assert.equal((await loadOrCreateTls({ dataDir: dir, certFile: pair.cert, keyFile: pair.key, hosts: [] })).action, 'loaded');
});

test('half a pair, an unreadable file or a non-certificate is refused with the file named', async (t) => {
  const dir = await tempDir(t);
  const pair = await opensslPair(dir, 'x');
  await assert.rejects(loadOrCreateTls({ dataDir: dir, certFile: pair.cert, hosts: [] }), { code: 'tls_pair_incomplete' });
  await assert.rejects(loadOrCreateTls({ dataDir: dir, keyFile: pair.key, hosts: [] }), { code: 'tls_pair_incomplete' });
  const missing = join(dir, 'nope.crt');
  await assert.rejects(loadOrCreateTls({ dataDir: dir, certFile: missing, keyFile: pair.key, hosts: [] }), (err: unknown) => {
    assert.ok(err instanceof TlsError && err.code === 'tls_file_unreadable' && err.message.includes(missing));
    return true;
  });
  // The key where the certificate should be: a classic operator mistake.
  await assert.rejects(loadOrCreateTls({ dataDir: dir, certFile: pair.key, keyFile: pair.key, hosts: [] }), (err: unknown) => {
    assert.ok(err instanceof TlsError && err.code === 'tls_cert_invalid' && err.message.includes(pair.key), String(err));
    return true;
  });
});

test('fingerprint and SPKI pin equal openssl CLI computations and are different digests', async (t) => {
  const dir = await tempDir(t);
  const generated = await loadOrCreateTls({ dataDir: dir, hosts: ['127.0.0.1'] });
  const rsa = await opensslPair(dir, 'rsa', ['-newkey', 'rsa:2048']);
  const cases: Array<[string, string]> = [
    [generated.certPath, generated.certPem],
    [rsa.cert, await readFile(rsa.cert, 'utf8')],
  ];
  for (const [path, pem] of cases) {
    const fp = await sh(`openssl x509 -in '${path}' -noout -fingerprint -sha256`);
    assert.equal(`sha256 Fingerprint=${certFingerprintSha256(pem)}`, fp);
    const pin = await sh(
      `openssl x509 -in '${path}' -pubkey -noout | openssl pkey -pubin -outform der | openssl dgst -sha256 -binary | base64`,
    );
    assert.equal(spkiPinSha256(pem), pin);
    const pinHex = Buffer.from(pin, 'base64').toString('hex').toUpperCase();
    assert.notEqual(pinHex, certFingerprintSha256(pem).replaceAll(':', ''));
  }
  assert.equal(generated.fingerprintSha256, certFingerprintSha256(generated.certPem));
  assert.equal(generated.pinSha256, spkiPinSha256(generated.certPem));
});

/** Serve `ok` over HTTPS with the material; returns the port. */
async function serve(t: { after: (fn: () => Promise<void>) => void }, m: TlsMaterial): Promise<number> {
  const server = createServer({ cert: m.certPem, key: m.keyPem }, (_req, res) => res.end('ok'));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.after(() => new Promise<void>((resolve) => server.close(() => resolve())));
  return (server.address() as AddressInfo).port;
}

test('curl completes a TLS handshake trusting the cert file or the pin, and rejects a wrong pin', async (t) => {
  const m = await loadOrCreateTls({ dataDir: await tempDir(t), hosts: ['127.0.0.1'] });
  const port = await serve(t, m);
  const curl = (...args: string[]) => tool('curl', ['-sS', '--max-time', '10', ...args]);

  for (const url of [`https://127.0.0.1:${port}/`, `https://localhost:${port}/`]) {
    const ok = await curl('--cacert', m.certPath, url);
    assert.equal(ok.code, 0, `${url}: ${ok.stderr}`);
    assert.equal(ok.stdout, 'ok');
  }
  const pinned = await curl('-k', '--pinnedpubkey', `sha256//${m.pinSha256}`, `https://127.0.0.1:${port}/`);
  assert.equal(pinned.code, 0, pinned.stderr);
  assert.equal(pinned.stdout, 'ok');

  // curl exit codes: 60 = peer certificate cannot be authenticated, 90 = pinned key mismatch.
  const untrusted = await curl(`https://127.0.0.1:${port}/`);
  assert.equal(untrusted.code, 60, untrusted.stderr);
  const wrongName = await curl(
    '--cacert',
    m.certPath,
    '--resolve',
    `other.example.test:${port}:127.0.0.1`,
    `https://other.example.test:${port}/`,
  );
  assert.equal(wrongName.code, 60, wrongName.stderr);
  const wrongPin = createHash('sha256').update('some other key').digest('base64');
  const bad = await curl('-k', '--pinnedpubkey', `sha256//${wrongPin}`, `https://127.0.0.1:${port}/`);
  assert.equal(bad.code, 90, bad.stderr);
  assert.equal(bad.stdout, '');
});
