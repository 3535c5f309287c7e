/**
 * The ledger forwarder's read + encode of one batch: the records of a seq range, each encoded with
 * the connector's encoder as it is read (its stored-text fast path when it has one, byte for byte
 * `encodeRecord`), so no page of records is held, only the lines the sink takes.
 */
import type { EncodeOptions, Encoder } from '../../encoders/encoder.js';
import { eachInRange } from '../../ledger/range-each.js';
import type { AuditRecord } from '../../ledger/record.js';
import type { Store } from '../../store/store.js';
import type { SinkItem } from './kinds/types.js';

/**
 * `s` as a string of its own: a line built by concatenation is a tree of pieces, many of them slices
 * of the row's text, and held until the batch is sent that tree and every row text it points into
 * outlive the young generation (GC was the largest cost). Slicing a concatenation makes V8 copy it
 * into one flat string; the result keeps only that copy alive.
 */
function detached(s: string): string {
  return (' ' + s).slice(1);
}

/** Sink items of `tenant`'s ledger records with seq in [from, to] except `skip`; throws when a record is missing. */
export async function ledgerItems(
  store: Store,
  tenant: string,
  from: number,
  to: number,
  skip: ReadonlySet<number>,
  enc: Encoder,
  opts: EncodeOptions,
): Promise<SinkItem[]> {
  const stored = enc.encodeStoredRecord?.bind(enc);
  const encode = stored ?? ((r: AuditRecord) => enc.encodeRecord(r, opts));
  const out: SinkItem[] = [];
  const count = await store.withTenant(tenant, (tx) =>
    eachInRange(tx, store.sqlite?.handle(tx), tenant, from, to, (r, text) => {
      if (skip.has(r.seq)) return;
      const line = detached(encode(r, opts, text));
      out.push({ line, id: `${tenant}:${r.seq}`, tenant, seq: r.seq, time: detached(r.occurred_at) });
    }),
  );
  if (count !== to - from + 1) throw new Error(`ledger range ${from}..${to} of ${tenant} returned ${count} records`);
  return out;
}
