/**
 * The egress guard at connect time, with real sockets and a resolver the test controls (a name that
 * changes its answer between connections: DNS rebinding): the undici connector and the net/tls
 * lookup check every address a name resolves to, resolve once per connection, and connect to the
 * address they checked; a refused address never sees a connection.
 */
import assert from 'node:assert/strict';
import type { LookupAddress } from 'node:dns';
import http from 'node:http';
import net, { type AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { Agent, buildConnector } from 'undici';
import { connectAddresses, egressRefusalOf, guardConnector, guardedLookup } from '../../../src/events/egress/connect.js';
import { parsePolicy } from '../../../src/events/egress/policy.js';

/** An HTTP server on `host` counting its connections. */
async function server(host: string): Promise<{ port: number; connections: () => number; close: () => Promise<void> }> {
  let n = 0;
  const s = http.createServer((_req, res) => res.end('ok'));
  s.on('connection', () => n++);
  await new Promise<void>((r) => s.listen(0, host, r));
  return {
    port: (s.address() as AddressInfo).port,
    connections: () => n,
    close: () => {
      s.closeAllConnections();
      return new Promise<void>((r) => s.close(() => r()));
    },
  };
}

describe('egress guard at connect time', () => {
  let allowed: Awaited<ReturnType<typeof server>>;
  let loopback: Awaited<ReturnType<typeof server>>;
  before(async () => {
    allowed = await server('127.0.0.2'); // an address the operator allows below
    loopback = await server('127.0.0.1');
  });
  after(async () => {
    await allowed?.close();
    await loopback?.close();
  });

  it('a name that rebinds to loopback after the first connection is refused on the next one; one resolution per connection', async () => {
    const policy = parsePolicy({ SERVICE_EGRESS_ALLOW_PRIVATE: '127.0.0.2' });
    const answers: LookupAddress[][] = [[{ address: '127.0.0.2', family: 4 }], [{ address: '127.0.0.1', family: 4 }]];
    let lookups = 0;
    const resolve = async (host: string): Promise<LookupAddress[]> => {
      assert.equal(host, 'rebind.test', 'the name is resolved in its normal form');
      return answers[Math.min(lookups++, answers.length - 1)] as LookupAddress[];
    };
    const agent = new Agent({ pipelining: 0, connect: guardConnector(buildConnector({}), { policy: () => policy, resolve }) });
    const origin = (port: number) => `http://REBIND.test.:${port}`;
    const first = await agent.request({ origin: origin(allowed.port), path: '/', method: 'GET', reset: true });
    assert.equal(first.statusCode, 200);
    await first.body.text();
    assert.equal(lookups, 1);
    assert.equal(allowed.connections(), 1);
    // the next connection (the first was closed: reset) resolves again, gets 127.0.0.1, and is refused
    const second = await agent.request({ origin: origin(allowed.port), path: '/', method: 'GET' }).catch((e: unknown) => e);
    assert.match(String(egressRefusalOf(second)), /rebind\.test \(resolved to 127\.0\.0\.1\) is a loopback address/);
    assert.equal(lookups, 2);
    assert.equal(allowed.connections(), 1, 'no second connection anywhere');
    assert.equal(loopback.connections(), 0);
    await agent.close();
  });

  it('a name with one refused address among others is refused; literals are checked without a resolver', async () => {
    const policy = parsePolicy({ SERVICE_EGRESS_ALLOW_PRIVATE: '127.0.0.2' });
    const resolve = async (): Promise<LookupAddress[]> => [
      { address: '127.0.0.2', family: 4 },
      { address: '169.254.169.254', family: 4 },
    ];
    await assert.rejects(connectAddresses('mixed.test', 80, { policy: () => policy, resolve }), /169\.254\.169\.254\) is a linkLocal/);
    const never = async (): Promise<LookupAddress[]> => assert.fail('a literal is never resolved');
    await assert.rejects(connectAddresses('[::ffff:127.0.0.1]', 80, { policy: () => policy, resolve: never }), /loopback/);
    assert.deepEqual(await connectAddresses('0x7f.0.0.2', 80, { policy: () => policy, resolve: never }), [
      { address: '127.0.0.2', family: 4 },
    ]);
  });

  it('net.connect with the guarded lookup: a name resolving to loopback never connects; the development flag lets it', async () => {
    const resolve = async (): Promise<LookupAddress[]> => [{ address: '127.0.0.1', family: 4 }];
    const attempt = (env: NodeJS.ProcessEnv) =>
      new Promise<Error | null>((done) => {
        const policy = parsePolicy(env);
        const lookup = guardedLookup(loopback.port, { policy: () => policy, resolve });
        const s = net.connect({ host: 'evil.test', port: loopback.port, lookup });
        s.once('connect', () => {
          s.destroy();
          done(null);
        });
        s.once('error', (err) => done(err));
      });
    const refused = await attempt({});
    assert.match(String(egressRefusalOf(refused)), /evil\.test \(resolved to 127\.0\.0\.1\) is a loopback address/);
    assert.equal(loopback.connections(), 0);
    assert.equal(await attempt({ SERVICE_EVENTING_ALLOW_INSECURE_ENDPOINTS: 'true' }), null);
    await new Promise((r) => setTimeout(r, 50));
    assert.equal(loopback.connections(), 1);
  });
});
