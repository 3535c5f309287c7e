/**
 * The inverse of the encoders for ledger records: rebuild, from the fields one export line carries,
 * the record a verifier needs (DECISIONS.md "Encoders": every ledger line carries the hashed fields
 * and the integrity fields verbatim). Exports do not carry `meta_blind`, so a decoded record has
 * `meta_blind: null` whatever its meta: the meta commitment is taken as exported (it is in the hash),
 * and the meta text itself cannot be checked against it (docs/audit-verification.md).
 */
import type { AuditRecord } from '../../ledger/record.js';

/** A line that is not a well-formed ledger record of its format. */
export class ExportDecodeError extends Error {
  override readonly name = 'ExportDecodeError';
}

/** A ledger field by its canonical name (`seq`, `actor`, `meta_commitment`…); undefined when the line lacks it. */
export type FieldLookup = (name: RecordFieldName) => string | null | undefined;

/** The record fields a line must carry (`payload_hash`, `meta` and `id` may be absent). */
export const REQUIRED_FIELDS = [
  'seq',
  'tenant',
  'occurred_at',
  'actor',
  'actor_kind',
  'action',
  'target_kind',
  'target_id',
  'meta_commitment',
  'prev_hash',
  'hash',
  'sig',
  'key_id',
] as const;
export type RecordFieldName = (typeof REQUIRED_FIELDS)[number] | 'payload_hash' | 'meta' | 'meta_erased' | 'id';

/** Builds the record from a line's fields; throws ExportDecodeError naming the first missing or malformed one. */
export function recordFromFields(get: FieldLookup): AuditRecord {
  const req = (name: (typeof REQUIRED_FIELDS)[number]): string => {
    const v = get(name);
    if (typeof v !== 'string') throw new ExportDecodeError(`no ${name}`);
    return v;
  };
  const seqText = req('seq');
  if (!/^[1-9][0-9]{0,15}$/.test(seqText) || !Number.isSafeInteger(Number(seqText)))
    throw new ExportDecodeError(`seq ${JSON.stringify(seqText.slice(0, 32))} is not a positive integer`);
  const opt = (name: 'payload_hash' | 'meta' | 'meta_erased' | 'id'): string | null => {
    const v = get(name);
    return typeof v === 'string' ? v : null;
  };
  // The erasure marker (ledger-fields.ts META_ERASED): meta beside it was put back after erasure.
  const erased = opt('meta_erased');
  if (erased !== null && erased !== 'true') throw new ExportDecodeError(`meta_erased ${JSON.stringify(erased.slice(0, 32))} is not true`);
  if (erased !== null && opt('meta') !== null) throw new ExportDecodeError('meta present on a record marked meta_erased');
  return {
    id: opt('id') ?? '',
    tenant: req('tenant'),
    seq: Number(seqText),
    occurred_at: req('occurred_at'),
    actor: req('actor'),
    actor_kind: req('actor_kind'),
    action: req('action'),
    target_kind: req('target_kind'),
    target_id: req('target_id'),
    meta: opt('meta'),
    meta_blind: null,
    meta_commitment: req('meta_commitment'),
    payload_hash: opt('payload_hash'),
    prev_hash: req('prev_hash'),
    hash: req('hash'),
    sig: req('sig'),
    key_id: req('key_id'),
  };
}
