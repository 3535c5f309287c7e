/**
 * `s3archive` into a real `s3rver` over HTTPS on loopback (path-style; s3rver checks the access key
 * id of the SigV4 authorization but does not recompute signatures),
 * read back with `@aws-sdk/client-s3`: keys are the documented deterministic layout, the sha256 in
 * `artifacts` equals the downloaded object's, multipart for large batches, and real ledger records
 * archived in batches, downloaded, gunzipped and concatenated verify with `svc audit verify --file`
 * against the pinned key. Faults: store down, wrong credentials, wrong certificate, deleted secret.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { Agent as HttpsAgent } from 'node:https';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { GetObjectCommand, HeadObjectCommand, ListObjectsV2Command, S3Client } from '@aws-sdk/client-s3';
import { SecretUnavailableError } from '../../../../src/core/console/secrets-service.js';
import { objectKey, s3ArchiveKind, type S3ArchiveConfig } from '../../../../src/core/connectors/kinds/s3archive.js';
import type { SinkItem } from '../../../../src/core/connectors/kinds/types.js';
import { publicKeyBytes } from '../../../../src/ledger/signers.js';
import { jsonOut, runSvc } from '../../../cli/harness.js';
import { deadPort, eventItems, events, ledger, makeCert, recordItemsAs, secretsContext, signal, type TestCert } from './harness.js';

const require = createRequire(import.meta.url);
const S3rver = require('s3rver') as new (o: object) => {
  run(): Promise<{ port: number }>;
  close(): Promise<void>;
  httpServer: { closeAllConnections(): void; on(e: 'request', f: (req: { method?: string; url?: string }) => void): void };
};
const cert = makeCert();
const BUCKET = 'svc-archive';

async function startS3(c: TestCert, port = 0) {
  const dir = mkdtempSync(join(tmpdir(), 'svc-s3rver-'));
  const server = new S3rver({
    address: '127.0.0.1',
    port,
    silent: true,
    directory: dir,
    key: c.keyPem,
    cert: c.certPem,
    configureBuckets: [{ name: BUCKET, configs: [] }],
  });
  const addr = await server.run();
  const requests: string[] = [];
  server.httpServer.on('request', (req) => requests.push(`${req.method} ${req.url}`));
  const url = `https://127.0.0.1:${addr.port}`;
  const client = new S3Client({
    endpoint: url,
    region: 'us-east-1',
    forcePathStyle: true,
    credentials: { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' },
    requestHandler: { httpsAgent: new HttpsAgent({ ca: c.certPem }) },
  });
  return {
    url,
    port: addr.port,
    client,
    requests,
    async get(key: string): Promise<Buffer> {
      const o = await client.send(new GetObjectCommand({ Bucket: BUCKET, Key: key }));
      return Buffer.from(await o.Body!.transformToByteArray());
    },
    async keys(): Promise<string[]> {
      const l = await client.send(new ListObjectsV2Command({ Bucket: BUCKET }));
      return (l.Contents ?? []).map((o) => o.Key!).sort();
    },
    async close() {
      client.destroy();
      server.httpServer.closeAllConnections();
      await server.close();
    },
  };
}

async function ctxWithKeys(access = 'S3RVER', secret = 'S3RVER') {
  const s = await secretsContext();
  await s.set('s3-access', access);
  await s.set('s3-secret', secret);
  return s;
}

const config = (url: string, extra: Partial<S3ArchiveConfig> = {}): S3ArchiveConfig => ({
  url,
  bucket: BUCKET,
  force_path_style: true,
  access_key_id_secret: 'secret:s3-access',
  secret_access_key_secret: 'secret:s3-secret',
  tls: { pin_sha256: cert.pinBase64 },
  ...extra,
});

const sha = (b: Buffer): string => createHash('sha256').update(b).digest('hex');

test(
  "s3archive: ledger batches become gzip NDJSON objects at deterministic keys; the sha256 in artifacts is the downloaded object's; the " +
    'archive verifies with svc audit verify --file',
  async (t) => {
    const s3 = await startS3(cert);
    const s = await ctxWithKeys();
    t.after(async () => {
      await s3.close();
      await s.dispose();
    });
    const cfg = config(s3.url, { prefix: 'audit/prod' });
    assert.deepEqual(s3ArchiveKind.validate?.(cfg), []);
    const sink = await s3ArchiveKind.open(cfg, s.ctx);
    const { signer, records } = ledger(300);
    const pubkey = publicKeyBytes('ed25519', signer.publicKey).toString('base64');
    const dir = mkdtempSync(join(tmpdir(), 'svc-s3-verify-'));
    for (const format of ['otlp', 'cef', 'ocsf']) {
      const items = recordItemsAs(records, 'notification', format);
      const prefix = `audit/${format}`;
      const fsink = await s3ArchiveKind.open({ ...cfg, prefix }, s.ctx);
      const keys: string[] = [];
      for (let i = 0; i < items.length; i += 100) {
        const batch = items.slice(i, i + 100);
        const r = await fsink.send(batch, signal());
        assert.equal(r.result, 'delivered', r.error);
        assert.equal(r.artifacts?.length, 1);
        const a = r.artifacts![0]!;
        const day = batch[0]!.time!.slice(0, 10).replaceAll('-', '/');
        const range = `${String(batch[0]!.seq).padStart(20, '0')}-${String(batch.at(-1)!.seq).padStart(20, '0')}`;
        assert.equal(a.key, `${prefix}/${batch[0]!.tenant}/${day}/${range}.ndjson.gz`);
        const body = await s3.get(a.key);
        assert.equal(sha(body), a.sha256, 'checksums equal');
        assert.deepEqual([a.items, a.bytes], [100, body.length]);
        const head = await s3.client.send(new HeadObjectCommand({ Bucket: BUCKET, Key: a.key }));
        assert.equal(head.Metadata?.['sha256'], a.sha256);
        assert.equal(gunzipSync(body).toString('utf8'), batch.map((x) => `${x.line}\n`).join(''));
        keys.push(a.key);
      }
      assert.deepEqual(
        (await s3.keys()).filter((k) => k.startsWith(`${prefix}/`)),
        [...keys].sort(),
        'keys sort in seq order',
      );
      // the receiver's side: download, gunzip, concatenate in key order, verify offline with the pinned key
      const parts = await Promise.all([...keys].sort().map((k) => s3.get(k)));
      const file = join(dir, `archive-${format}.ndjson`);
      writeFileSync(file, Buffer.concat(parts.map((p) => gunzipSync(p))));
      const run = await runSvc(['audit', 'verify', '--file', file, '--pubkey', pubkey, '-o', 'json'], { timeoutMs: 60_000 });
      const report = jsonOut(run);
      assert.equal(run.code, 0, `${format}: ${run.stderr}`);
      assert.equal(report.ok, true, `${format}: ${JSON.stringify(report)}`);
      assert.equal(report.chain.checked, 300);
      assert.equal(report.signatures.checked, 300);
      await fsink.close();
    }
    // a retried batch overwrites its object: same key, no second object
    const again = recordItemsAs(records.slice(0, 100), 'notification', 'otlp');
    const before = (await s3.keys()).length;
    const r2 = await (await s3ArchiveKind.open({ ...cfg, prefix: 'audit/otlp' }, s.ctx)).send(again, signal());
    assert.equal(r2.result, 'delivered');
    assert.equal((await s3.keys()).length, before);
    await sink.close();
  },
);

test(
  's3archive: events go one object per tenant under events-<hash>; a large batch goes up multipart and reads back identical',
  async (t) => {
    const s3 = await startS3(cert);
    const s = await ctxWithKeys();
    t.after(async () => {
      await s3.close();
      await s.dispose();
    });
    const sink = await s3ArchiveKind.open(
      config(s3.url, { multipart_threshold_bytes: 5 * 1024 * 1024, part_size_bytes: 5 * 1024 * 1024 }),
      s.ctx,
    );
    const evs = [...events(4, 'tenant-a'), ...events(3, 'tenant-b')].map((e, i) => ({ ...e, id: `${e.id}-${i}` }));
    const items = eventItems(evs, 'notification', 'json');
    const r = await sink.send(items, signal());
    assert.equal(r.result, 'delivered', r.error);
    assert.deepEqual(
      r.artifacts?.map((a) => [a.key.split('/')[1], a.items]),
      [
        ['tenant-a', 4],
        ['tenant-b', 3],
      ],
    );
    assert.match(r.artifacts![0]!.key, /^svc-audit\/tenant-a\/2026\/11\/27\/events-[0-9a-f]{32}\.ndjson\.gz$/);
    assert.equal(r.artifacts![0]!.key, objectKey('svc-audit', 'tenant-a', items.slice(0, 4)), 'deterministic');
    for (const a of r.artifacts!) assert.equal(sha(await s3.get(a.key)), a.sha256);
    // ~7.5 MB of gzip (random payloads do not compress): above the 5 MiB threshold, two parts
    const big: SinkItem[] = eventItems(
      events(4000).map((e) => ({ ...e, fields: { ...e.fields, blob: randomBytes(1400).toString('base64') } })),
      'notification',
      'json',
    );
    const rb = await sink.send(big, signal());
    assert.equal(rb.result, 'delivered', rb.error);
    const a = rb.artifacts![0]!;
    assert.ok(a.bytes > 5 * 1024 * 1024, String(a.bytes));
    const body = await s3.get(a.key);
    assert.equal(body.length, a.bytes);
    assert.equal(sha(body), a.sha256);
    assert.equal(gunzipSync(body).toString('utf8'), big.map((x) => `${x.line}\n`).join(''));
    // the multipart protocol on the wire: initiate, two parts, complete
    const path = `/${BUCKET}/${a.key}`;
    const mine = s3.requests.filter((r) => r.split('?')[0]!.endsWith(path));
    assert.equal(mine.filter((r) => /^POST .*\?uploads/.test(r)).length, 1, mine.join('\n'));
    assert.equal(mine.filter((r) => /^PUT .*partNumber=/.test(r)).length, 2, mine.join('\n'));
    assert.equal(mine.filter((r) => /^POST .*uploadId=/.test(r)).length, 1, mine.join('\n'));
    assert.equal(mine.filter((r) => /^PUT /.test(r) && !r.includes('partNumber=')).length, 0, 'no single PUT of the whole object');
    await sink.close();
  },
);

test(
  's3archive: store down retries and the same batch lands once it is back; wrong credentials fail; wrong certificate stores nothing; ' +
    'deleted secret fails closed',
  async (t) => {
    const s = await ctxWithKeys();
    t.after(() => s.dispose());
    const items = recordItemsAs(ledger(10).records, 'notification', 'json');
    const port = await deadPort();
    const sink = await s3ArchiveKind.open(config(`https://127.0.0.1:${port}`, { timeout_ms: 2000 }), s.ctx);
    const down = await sink.send(items, signal());
    assert.equal(down.result, 'retry');
    assert.match(down.error ?? '', /ECONNREFUSED/);
    const s3 = await startS3(cert, port);
    t.after(() => s3.close());
    const up = await sink.send(items, signal());
    assert.equal(up.result, 'delivered', up.error);
    assert.equal((await s3.keys()).length, 1);

    // s3rver checks the access key id (it does not recompute SigV4 signatures)
    const bad = await ctxWithKeys('AKIANOTAKNOWNKEY', 'not-the-secret-key');
    t.after(() => bad.dispose());
    const wrongKeys = await s3ArchiveKind.open(config(s3.url, { prefix: 'x' }), bad.ctx);
    const w = await wrongKeys.send(items, signal());
    assert.deepEqual([w.result, w.status], ['failed', 403]);
    assert.match(w.error ?? '', /InvalidAccessKeyId/);
    assert.ok(!(w.error ?? '').includes('not-the-secret-key'));
    await wrongKeys.close();

    const other = makeCert();
    const wrongCert = await s3ArchiveKind.open(config(s3.url, { prefix: 'y', tls: { pin_sha256: other.pinBase64 } }), s.ctx);
    const wc = await wrongCert.send(items, signal());
    assert.equal(wc.result, 'retry');
    assert.match(wc.error ?? '', /pin_sha256/);
    const noCa = await s3ArchiveKind.open(config(s3.url, { prefix: 'z', tls: { ca_file: other.certPath } }), s.ctx);
    assert.equal((await noCa.send(items, signal())).result, 'retry');
    assert.equal((await s3.keys()).length, 1, 'nothing stored through a wrong certificate');
    await wrongCert.close();
    await noCa.close();

    await s.remove('s3-secret');
    await assert.rejects(sink.send(items, signal()), SecretUnavailableError);
    await assert.rejects(s3ArchiveKind.open(config(s3.url), s.ctx), SecretUnavailableError);
    await sink.close();
  },
);

test('s3archive: schema and validate', async () => {
  const { Compile } = await import('typebox/compile');
  const check = Compile(s3ArchiveKind.configSchema);
  const base = {
    url: 'https://s3.eu-west-1.amazonaws.com',
    bucket: 'svc-archive',
    access_key_id_secret: 'secret:a',
    secret_access_key_secret: 'secret:b',
  };
  assert.equal(check.Check(base), true);
  assert.equal(check.Check({ ...base, acl: 'public-read' }), false);
  assert.equal(check.Check({ ...base, access_key_id_secret: 'AKIA…' }), false);
  assert.equal(check.Check({ ...base, part_size_bytes: 1024 }), false, 'S3 parts are at least 5 MiB');
  assert.equal(check.Check({ ...base, bucket: 'Bad_Bucket' }), false);
  assert.deepEqual(s3ArchiveKind.validate!(base), []);
  assert.match(s3ArchiveKind.validate!({ ...base, url: 'http://minio:9000' }).join(';'), /https/);
  assert.match(s3ArchiveKind.validate!({ ...base, part_size_bytes: 64 * 1024 * 1024 }).join(';'), /part_size_bytes/);
});
