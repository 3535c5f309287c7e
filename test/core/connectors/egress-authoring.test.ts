/**
 * Creating or changing a connector whose destination the egress guard refuses is a 400
 * `egress_refused` naming the address (issue 47 item 9): the HTTP kinds' `url` and syslog's `host`,
 * in any spelling of loopback or link-local; the development flag allows loopback only.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { ApiError } from '../../../src/contract/errors.js';
import { validateConnector, type ConnectorInput } from '../../../src/core/connectors/connector-store.js';
import { createSqliteTestStore, type TestStore } from '../../helpers/stores.js';

const DEV = 'SERVICE_EVENTING_ALLOW_INSECURE_ENDPOINTS';
let ts: TestStore;
before(async () => {
  ts = await createSqliteTestStore();
  await ts.store.migrate();
});
after(async () => {
  process.env[DEV] = 'true';
  await ts?.dispose();
});

const validate = (input: ConnectorInput) => validateConnector(ts.store, input, () => true);
const siem = (url: string): ConnectorInput => ({ name: 's', kind: 'siem', config: { url } });
const syslog = (host: string): ConnectorInput => ({ name: 'l', kind: 'syslog', config: { host, pin_sha256: `${'A'.repeat(43)}=` } });

test('connectors: loopback in every spelling and 169.254.169.254 are 400 egress_refused; the flag allows loopback only', async () => {
  delete process.env[DEV];
  const refused: ConnectorInput[] = [
    siem('https://[::ffff:127.0.0.1]:8088/in'),
    siem('https://0x7f.1/in'),
    siem('https://localhost./in'),
    siem('https://169.254.169.254/latest/meta-data'),
    siem('https://[64:ff9b::a9fe:a9fe]/in'),
    { name: 'o', kind: 'otlp', config: { url: 'https://2130706433:4318/v1/logs' } },
    syslog('127.1'),
    syslog('::1'),
    syslog('LOCALHOST'),
    syslog('10.0.0.7'),
  ];
  for (const input of refused) {
    const err = await validate(input).then(
      () => null,
      (e: unknown) => e,
    );
    assert.ok(err instanceof ApiError, `${JSON.stringify(input.config)}: ${String(err)}`);
    assert.equal(err.code, 'egress_refused', JSON.stringify(input.config));
    assert.equal(err.status, 400);
    assert.match(err.message, /is a (loopback|linkLocal|private) address/);
  }
  process.env[DEV] = 'true';
  await validate(siem('https://[::ffff:127.0.0.1]:8088/in'));
  await validate(syslog('localhost'));
  await assert.rejects(validate(siem('https://169.254.169.254/x')), /linkLocal/);
  process.env['SERVICE_EGRESS_ALLOW_PRIVATE'] = '10.0.0.0/8';
  try {
    await validate(syslog('10.0.0.7'));
  } finally {
    delete process.env['SERVICE_EGRESS_ALLOW_PRIVATE'];
  }
});
