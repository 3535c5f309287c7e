/**
 * Child process of intent-crash.test.ts: the shape of a mutating request, forever, from 16
 * concurrent "clients": in a request scope, commit a change (an agent row named after the request),
 * then append its audit record, as the agent routes do. The parent SIGKILLs it at random moments.
 * argv: <backend sqlite|postgres> <dataDir> [dsn]
 */
import { newIntentScope, runInIntentScope } from '../../src/ledger/audit-intent.js';
import { LedgerService } from '../../src/ledger/ledger-service.js';
import { nowTimestamp } from '../../src/ledger/time.js';
import { uuid7 } from '../../src/ledger/uuid7.js';
import { openStore, type StoreBackend } from '../../src/store/store.js';
import { TENANT } from './fixtures.js';

const [backend, dataDir, dsn] = process.argv.slice(2) as [StoreBackend, string, string | undefined];
const store = await openStore({ backend, dataDir, ...(dsn ? { dsn, poolSize: 4 } : {}) });
await store.migrate();
const ledger = await LedgerService.open({
  store,
  dataDir,
  threads: 2,
  checkpointIntervalMs: 0,
  env: {},
  intentRecovery: { intervalMs: 0 },
});
process.stdout.write('ready\n');
const client = async (): Promise<never> => {
  for (;;) {
    const requestId = uuid7();
    const scope = newIntentScope({ requestId, route: 'POST /v1/agents', actor: 'user:crash-test', actorKind: 'user' });
    await runInIntentScope(scope, async () => {
      const id = uuid7();
      const now = nowTimestamp();
      await store.withTenant(TENANT, (tx) =>
        tx
          .insertInto('agents')
          .values({
            id,
            tenant_id: TENANT,
            name: requestId,
            kind: 'agent',
            external_id: '',
            status: 'active',
            version: 1,
            created_at: now,
            updated_at: now,
          })
          .execute(),
      );
      await ledger.sink.append(TENANT, {
        actor: 'user:crash-test',
        actor_kind: 'user',
        action: 'agent.create',
        target_kind: 'agent',
        target_id: id,
        meta: { request_id: requestId },
      });
      process.stdout.write(`${id}\n`);
    });
  }
};
await Promise.all(Array.from({ length: 16 }, client));
