/**
 * The ledger forwarder's read: the records of one seq range handed over one at a time, as
 * {@link readRange} serves them. On SQLite, with the connection under the caller's transaction, the
 * rows come as one joined text each (export-iterator.ts `sqliteStoredRowIterator`, the export's
 * reader): no Buffer per blob column and no hex in JavaScript, and `text` lets an encoder's
 * `encodeStoredRecord` skip its escaping scans. Elsewhere (Postgres) the records come from
 * {@link readRange} with `text` undefined.
 */
import { sqliteStoredRowIterator, type SqlitePluckHandle, type StoredRowVisitor } from './export-iterator.js';
import { readRange } from './ledger-store.js';
import type { AuditRecord } from './record.js';
import type { Tx } from './row-codec.js';

// One reader (and its prepared statements) per connection.
const readers = new WeakMap<SqlitePluckHandle, StoredRowVisitor>();

/**
 * Visits the records of `tenant` with seq in [fromSeq, toSeq] ascending and returns how many there
 * were. `db` is the SQLite connection under `tx` (`store.sqlite.handle(tx)`), or undefined.
 */
export async function eachInRange(
  tx: Tx,
  db: SqlitePluckHandle | undefined,
  tenant: string,
  fromSeq: number,
  toSeq: number,
  visit: (record: AuditRecord, text: string | undefined) => void,
): Promise<number> {
  if (db !== undefined) {
    let read = readers.get(db);
    if (read === undefined) {
      read = sqliteStoredRowIterator(db);
      readers.set(db, read);
    }
    return read(tenant, fromSeq, toSeq, {}, visit);
  }
  const records = await readRange(tx, tenant, fromSeq, toSeq);
  for (const r of records) visit(r, undefined);
  return records.length;
}
