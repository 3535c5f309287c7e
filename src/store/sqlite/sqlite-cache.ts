/**
 * The size of SQLite's page cache (`SERVICE_SQLITE_CACHE_MIB`). Its own module, free of the
 * native driver, so the serve config can check the setting without opening anything.
 */

/**
 * SQLite's page cache in MiB when the configuration names none. 2 GiB: the access map's large
 * merges need that much to write each index page they touch once (they used to raise the cache to
 * it for their own transaction, so the peak is unchanged), and keeping it keeps node lookups and
 * reads in memory between merges: bench accessmap at 3,000,000 edges, 18,452 -> 21,126 edges/s,
 * worst batch 14.5 -> 11.2 s, against 64 MiB raised for each merge (docs/accessmap.md "The page
 * cache"). It is a cap: SQLite allocates a page only when it reads one, so a database smaller than
 * the cache never fills it.
 */
export const DEFAULT_SQLITE_CACHE_MIB = 2048;

/** The range `SERVICE_SQLITE_CACHE_MIB` accepts, in MiB: 16 MiB to 64 GiB. */
export const SQLITE_CACHE_MIB_RANGE = [16, 65_536] as const;

/** `mib` if it is an integer within {@link SQLITE_CACHE_MIB_RANGE}; a RangeError naming the setting otherwise. */
export function checkSqliteCacheMib(mib: number, shown: string = String(mib)): number {
  const [lo, hi] = SQLITE_CACHE_MIB_RANGE;
  if (!Number.isInteger(mib) || mib < lo || mib > hi)
    throw new RangeError(`SERVICE_SQLITE_CACHE_MIB must be an integer from ${lo} to ${hi} (MiB), got ${shown}`);
  return mib;
}

/** `SERVICE_SQLITE_CACHE_MIB` in MiB, undefined when unset or empty; throws a RangeError on anything but a whole number in range. */
export function sqliteCacheMibFromEnv(env: NodeJS.ProcessEnv = process.env): number | undefined {
  const raw = env['SERVICE_SQLITE_CACHE_MIB'];
  if (raw === undefined || raw.trim() === '') return undefined;
  const shown = JSON.stringify(raw);
  if (!/^\s*\d+\s*$/.test(raw)) checkSqliteCacheMib(Number.NaN, shown);
  return checkSqliteCacheMib(Number(raw), shown);
}
