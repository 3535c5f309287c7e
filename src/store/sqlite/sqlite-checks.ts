/**
 * CHECK-constraint helpers for SQLite migrations. SQLite has no uuid or timestamp type, so GLOB
 * checks give the columns the guarantees Postgres gets from `uuid` and its regex CHECKs:
 * lowercase canonical UUIDs and 9-digit RFC 3339 UTC text.
 */
const HEX = '[0-9a-f]';
const D = '[0-9]';
const UUID_GLOB = `${HEX.repeat(8)}-${HEX.repeat(4)}-${HEX.repeat(4)}-${HEX.repeat(4)}-${HEX.repeat(12)}`;
const TS_GLOB = `${D.repeat(4)}-${D.repeat(2)}-${D.repeat(2)}T${D.repeat(2)}:${D.repeat(2)}:${D.repeat(2)}.${D.repeat(9)}Z`;

/** `<col> glob '<lowercase uuid>'` */
export const uuid = (col: string): string => `${col} glob '${UUID_GLOB}'`;
/** `<col> glob '<YYYY-MM-DDTHH:MM:SS.nnnnnnnnnZ>'` */
export const ts = (col: string): string => `${col} glob '${TS_GLOB}'`;
