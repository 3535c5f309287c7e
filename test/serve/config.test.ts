import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ConfigError, isLoopback, parseListen, resolveServeConfig } from '../../src/serve/config.js';

const env = { HOME: '/home/x' } as NodeJS.ProcessEnv;

test('config: secure defaults — TLS on, both listeners on 127.0.0.1, SQLite', () => {
  const c = resolveServeConfig({}, env);
  assert.deepEqual(c.listen, { host: '127.0.0.1', port: 8443, scheme: 'default' });
  assert.deepEqual(c.grpcListen, { host: '127.0.0.1', port: 8444, scheme: 'default' });
  assert.equal(c.insecure, false);
  assert.equal(c.seedDemo, false);
  assert.equal(c.store, 'sqlite');
  assert.equal(c.dataDir, '/home/x/.local/share/svc');
});

test('config: flag > SERVICE_* env > default', () => {
  const e = {
    ...env,
    SERVICE_LISTEN: '127.0.0.2:9000',
    SERVICE_DATA_DIR: '/env/dir',
    SERVICE_STORE: 'postgres',
    SERVICE_DSN: 'postgres://a@b/c',
  };
  const fromEnv = resolveServeConfig({}, e);
  assert.equal(fromEnv.listen.port, 9000);
  assert.equal(fromEnv.dataDir, '/env/dir');
  assert.equal(fromEnv.store, 'postgres');
  const fromFlag = resolveServeConfig(
    { listen: '127.0.0.3:9100', dataDir: '/flag/dir', store: 'sqlite', dsn: undefined },
    { ...e, SERVICE_DSN: '' },
  );
  assert.equal(fromFlag.listen.host, '127.0.0.3');
  assert.equal(fromFlag.dataDir, '/flag/dir');
  assert.equal(fromFlag.store, 'sqlite');
});

test('config: --seed-demo is refused on any non-loopback bind, HTTP or gRPC', () => {
  for (const flags of [
    { seedDemo: true, listen: '0.0.0.0:8443' },
    { seedDemo: true, grpcListen: '0.0.0.0:8444' },
    { seedDemo: true, listen: '10.1.2.3:8443' },
    { seedDemo: true, listen: '[::]:8443' },
    { seedDemo: true, listen: 'example.com:8443' },
  ]) {
    assert.throws(
      () => resolveServeConfig(flags, env),
      (err: Error) => err instanceof ConfigError && /--seed-demo/.test(err.message) && /loopback/.test(err.message),
      JSON.stringify(flags),
    );
  }
  assert.equal(resolveServeConfig({ seedDemo: true, listen: 'localhost:8443', grpcListen: '[::1]:8444' }, env).seedDemo, true);
  assert.throws(
    () => resolveServeConfig({}, { ...env, SERVICE_SEED_DEMO: 'true', SERVICE_LISTEN: '0.0.0.0:1' }),
    ConfigError,
    'the env var obeys the same rule',
  );
});

test('config: --insecure is refused on a non-loopback bind; plaintext needs --insecure', () => {
  assert.throws(() => resolveServeConfig({ insecure: true, listen: '0.0.0.0:8080' }, env), /--insecure serves plaintext/);
  assert.throws(() => resolveServeConfig({ insecure: true, grpcListen: '192.168.1.5:8444' }, env), /--insecure/);
  assert.throws(() => resolveServeConfig({ grpcListen: 'grpc://127.0.0.1:8444' }, env), /gRPC server refuses to start in plaintext/);
  assert.throws(() => resolveServeConfig({ listen: 'http://127.0.0.1:8080' }, env), /plain HTTP.*needs --insecure/);
  assert.equal(resolveServeConfig({ insecure: true, grpcListen: 'grpc://127.0.0.1:8444' }, env).insecure, true);
  assert.throws(() => resolveServeConfig({ insecure: true, listen: 'https://127.0.0.1:1' }, env), /contradictory/);
  assert.throws(() => resolveServeConfig({ insecure: true, tlsCert: 'a', tlsKey: 'b' }, env), /contradictory/);
});

test('config: malformed values are refused with the flag named', () => {
  assert.throws(() => resolveServeConfig({ listen: '127.0.0.1' }, env), /--listen: expected host:port/);
  assert.throws(() => resolveServeConfig({ listen: '127.0.0.1:99999' }, env), /--listen: port/);
  assert.throws(() => resolveServeConfig({ grpcListen: 'ftp://127.0.0.1:1' }, env), /--grpc-listen: unknown scheme/);
  assert.throws(() => resolveServeConfig({ store: 'mysql' }, env), /--store/);
  assert.throws(() => resolveServeConfig({ store: 'postgres' }, env), /--dsn/);
  assert.throws(() => resolveServeConfig({ tlsCert: 'c.pem' }, env), /go together/);
  assert.throws(() => resolveServeConfig({}, { ...env, SERVICE_INSECURE: 'maybe' }), /SERVICE_INSECURE/);
  assert.throws(() => resolveServeConfig({ logLevel: 'loud' }, env), /--log-level/);
  assert.throws(
    () => resolveServeConfig({}, { ...env, SERVICE_CRYPTO_ENGINE: 'nacl' }),
    (err: Error) => err instanceof ConfigError && /SERVICE_CRYPTO_ENGINE must be one of auto, libsodium, openssl/.test(err.message),
  );
  assert.equal(resolveServeConfig({}, { ...env, SERVICE_CRYPTO_ENGINE: 'openssl' }).cryptoEngine, 'openssl');
  assert.throws(
    () => resolveServeConfig({}, { ...env, SERVICE_ACCESSMAP_MERGE_ROWS: '10' }),
    (err: Error) => err instanceof ConfigError && /SERVICE_ACCESSMAP_MERGE_ROWS must be an integer from 1000 to 10000000/.test(err.message),
  );
  assert.equal(resolveServeConfig({}, env).accessmapMergeRows, 250_000);
  assert.equal(resolveServeConfig({}, { ...env, SERVICE_ACCESSMAP_MERGE_ROWS: '1000000' }).accessmapMergeRows, 1_000_000);
  assert.throws(
    () => resolveServeConfig({}, { ...env, SERVICE_ACCESSMAP_LINKING_IDS: 'all' }),
    (err: Error) => err instanceof ConfigError && /SERVICE_ACCESSMAP_LINKING_IDS must be an integer from 0 to 100000000/.test(err.message),
  );
  assert.equal(resolveServeConfig({}, env).accessmapLinkingIds, 1_000_000);
  assert.equal(resolveServeConfig({}, { ...env, SERVICE_ACCESSMAP_LINKING_IDS: '0' }).accessmapLinkingIds, 0);
  assert.throws(
    () => resolveServeConfig({}, { ...env, SERVICE_ACCESSMAP_NODE_CACHE: '-1' }),
    (err: Error) => err instanceof ConfigError && /SERVICE_ACCESSMAP_NODE_CACHE must be an integer from 0 to 100000000/.test(err.message),
  );
  assert.equal(resolveServeConfig({}, env).accessmapNodeCache, 2_000_000);
  assert.equal(resolveServeConfig({}, { ...env, SERVICE_ACCESSMAP_NODE_CACHE: '0' }).accessmapNodeCache, 0);
  // SQLite's page cache: unset = the store's default; whole MiB from 16 to 65536, nothing else.
  assert.equal(resolveServeConfig({}, env).sqliteCacheMib, undefined);
  assert.equal(resolveServeConfig({}, { ...env, SERVICE_SQLITE_CACHE_MIB: '256' }).sqliteCacheMib, 256);
  assert.equal(resolveServeConfig({}, { ...env, SERVICE_SQLITE_CACHE_MIB: '65536' }).sqliteCacheMib, 65_536);
  for (const bad of ['15', '65537', '1.5', '-64', '2g', '0x100', '1e3', 'lots']) {
    assert.throws(
      () => resolveServeConfig({}, { ...env, SERVICE_SQLITE_CACHE_MIB: bad }),
      (err: Error) =>
        err instanceof ConfigError &&
        err.message === `SERVICE_SQLITE_CACHE_MIB must be an integer from 16 to 65536 (MiB), got ${JSON.stringify(bad)}`,
      bad,
    );
  }
});

test('config: loopback detection', () => {
  for (const h of ['127.0.0.1', '127.8.9.10', 'localhost', '::1', '::ffff:127.0.0.1', 'LOCALHOST']) assert.equal(isLoopback(h), true, h);
  for (const h of ['0.0.0.0', '::', '10.0.0.1', '128.0.0.1', 'localhost.example.com', '::ffff:10.0.0.1'])
    assert.equal(isLoopback(h), false, h);
  assert.deepEqual(parseListen('[::1]:8443', '--listen', ['https', 'http']), { host: '::1', port: 8443, scheme: 'default' });
});
