// Probe (not a scenario): which write locks a transaction takes when a second SQLite file is attached to the
// connection, while another connection (the merge worker of docs/accessmap.md "Merges on a worker thread,
// measured again") holds that file's write lock. Prints one line per case; exits 1 if SQLite behaves otherwise
// than the docs say. Run: node bench/probes/attach-locks.mjs   (two small files in a temp dir; under a second)
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';

const dir = mkdtempSync(join(tmpdir(), 'svc-attach-locks-'));
const mainFile = join(dir, 'svc.db');
const edgeFile = join(dir, 'edges.db');
const open = (f) => {
  const db = new Database(f);
  db.pragma('journal_mode = WAL');
  db.pragma('busy_timeout = 100');
  return db;
};
const worker = open(edgeFile);
worker.exec('create table access_edges (x)');
const store = open(mainFile);
store.exec('create table access_node_counter (last integer); insert into access_node_counter values (0); create table access_edges_recent (x)');
store.prepare('attach database ? as e').run(edgeFile);
const other = open(mainFile); // another process on svc.db, say an offline `svc` command

let failed = false;
const expect = (what, ok, detail) => {
  console.log(`${ok ? 'as documented' : 'NOT as documented'}: ${what}${detail ? ` (${detail})` : ''}`);
  if (!ok) failed = true;
};
const attempt = (fn) => {
  try {
    fn();
    return 'ok';
  } catch (err) {
    return err.code ?? String(err);
  }
};

worker.exec('begin immediate');
worker.exec('insert into access_edges values (1)'); // a merge in progress: the edge file is write-locked

// 1. BEGIN IMMEDIATE takes the write lock of every attached file, so it waits for the merge and fails.
const immediate = attempt(() => store.exec('begin immediate'));
if (store.inTransaction) store.exec('rollback');
expect('BEGIN IMMEDIATE on the store waits for the worker and fails while the edge file is locked', immediate === 'SQLITE_BUSY', immediate);

// 2. BEGIN DEFERRED and at once a write that changes nothing in svc.db: svc.db's lock alone.
const deferred = attempt(() => {
  store.exec('begin deferred');
  store.prepare('update main.access_node_counter set last = last where 0').run();
});
expect('BEGIN DEFERRED + a no-op write to svc.db succeeds beside the merge', deferred === 'ok', deferred);
// Checked before the transaction writes anything real: the no-op write alone must hold svc.db's lock.
const contender = attempt(() => other.exec('begin immediate'));
if (other.inTransaction) other.exec('rollback');
expect('the no-op write alone write-locks svc.db (another connection is refused)', contender === 'SQLITE_BUSY', contender);
const append = attempt(() => store.prepare('insert into access_edges_recent values (1)').run());
expect('the transaction appends to svc.db while the edge file stays locked by the worker', append === 'ok', append);
const seen = store.prepare('select count(*) as n from access_edges').get().n;
expect('the store reads the edge file as last committed (the merge is not visible yet)', seen === 0, `${seen} rows`);
if (store.inTransaction) store.exec('commit');
worker.exec('commit');
const after = store.prepare('select count(*) as n from access_edges').get().n;
expect("the worker's commit is visible to the store's next read", after === 1, `${after} rows`);

// 3. A read-only attach would say the same more directly, but better-sqlite3 opens without URI names.
const uri = attempt(() => store.prepare(`attach database 'file:${edgeFile}?mode=ro' as ro`).run());
expect('`attach ... file:...?mode=ro` is refused (no URI names)', uri !== 'ok', uri);

for (const db of [store, other, worker]) db.close();
rmSync(dir, { recursive: true, force: true });
process.exit(failed ? 1 : 0);
