/** `--grpc-client-ca` / SERVICE_GRPC_CLIENT_CA in the serve configuration (mutual TLS for gRPC). */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ConfigError, resolveServeConfig } from '../../src/serve/config.js';

test('the flag wins over the environment; either sets grpcClientCa', () => {
  assert.equal(resolveServeConfig({ grpcClientCa: '/a.pem' }, { SERVICE_GRPC_CLIENT_CA: '/b.pem' }).grpcClientCa, '/a.pem');
  assert.equal(resolveServeConfig({}, { SERVICE_GRPC_CLIENT_CA: '/b.pem' }).grpcClientCa, '/b.pem');
  assert.equal(resolveServeConfig({}, {}).grpcClientCa, undefined);
});

test('mutual TLS cannot be combined with --insecure (plaintext)', () => {
  assert.throws(
    () => resolveServeConfig({ grpcClientCa: '/a.pem', insecure: true }, {}),
    (err: unknown) => err instanceof ConfigError && /--grpc-client-ca/.test(err.message),
  );
});
