/**
 * API key lifetimes (issue 30 item 6): a key without an explicit expiry gets the operator's
 * default (`SERVICE_TOKEN_DEFAULT_TTL`, 90 days unless set); a key that never expires exists only
 * when its issuer asks for `ttl: "never"`. Durations are a count and a unit: `30m`, `12h`, `90d`,
 * `2w`.
 */

/** The default of `SERVICE_TOKEN_DEFAULT_TTL`. */
export const DEFAULT_TOKEN_TTL = '90d';

/** Request and environment form of a lifetime. */
export const TTL_PATTERN = '^(?:[1-9][0-9]{0,5}[mhdw]|never)$';

const UNIT_MS = { m: 60_000, h: 3_600_000, d: 86_400_000, w: 604_800_000 } as const;
/** Longer than any key should live; keeps the expiry a four-digit year. */
const MAX_TTL_MS = 100 * 365 * 86_400_000;

/** `90d` → milliseconds; `never` → null; undefined when it is neither. */
export function parseTtl(text: string): number | null | undefined {
  if (text === 'never') return null;
  const m = /^([1-9][0-9]{0,5})([mhdw])$/.exec(text);
  if (!m) return undefined;
  const ms = Number(m[1]) * UNIT_MS[m[2] as keyof typeof UNIT_MS];
  return ms > MAX_TTL_MS ? undefined : ms;
}

/**
 * The operator's default lifetime in ms from `SERVICE_TOKEN_DEFAULT_TTL`. `never` is refused here:
 * a key that never expires must be asked for, key by key.
 */
export function tokenDefaultTtlFromEnv(env: Record<string, string | undefined>): number {
  const raw = env['SERVICE_TOKEN_DEFAULT_TTL']?.trim() || DEFAULT_TOKEN_TTL;
  const ms = parseTtl(raw);
  if (ms === null)
    throw new RangeError(
      'SERVICE_TOKEN_DEFAULT_TTL cannot be "never": a key that never expires is asked for per key (ttl "never", svc tokens issue ' +
        '--ttl never)',
    );
  if (ms === undefined)
    throw new RangeError(
      `SERVICE_TOKEN_DEFAULT_TTL must be a count and a unit (m, h, d, w), e.g. 90d, up to 100 years; got ${JSON.stringify(raw)}`,
    );
  return ms;
}
