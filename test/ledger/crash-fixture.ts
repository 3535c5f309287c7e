/**
 * Child process of crash.test.ts: opens the store and the real ledger (pool, pipeline), then appends
 * from 32 concurrent appenders forever, printing `<seq> <hash>` for every append once it is
 * acknowledged. The parent SIGKILLs it at random moments.
 * argv: <backend sqlite|postgres> <dataDir> [dsn]
 */
import { LedgerService } from '../../src/ledger/ledger-service.js';
import { openStore, type StoreBackend } from '../../src/store/store.js';
import { TENANT, draft } from './fixtures.js';

const [backend, dataDir, dsn] = process.argv.slice(2) as [StoreBackend, string, string | undefined];
const store = await openStore({ backend, dataDir, ...(dsn ? { dsn, poolSize: 4 } : {}) });
await store.migrate();
const ledger = await LedgerService.open({ store, dataDir, threads: 2, checkpointIntervalMs: 0, env: {} });
process.stdout.write('ready\n');
let i = 0;
const appender = async (): Promise<never> => {
  for (;;) {
    const r = await ledger.append(
      TENANT,
      i % 50 === 49
        ? { actor: 'system', actor_kind: 'system', action: 'audit.checkpoint', target_kind: 'audit.chain', target_id: '' }
        : draft(i),
    );
    i++;
    process.stdout.write(`${r.seq} ${r.hash}\n`);
  }
};
await Promise.all(Array.from({ length: 32 }, appender));
