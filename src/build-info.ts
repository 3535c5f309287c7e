/** What this build is: version, commit and date from `dist/build-info.json` (written at build time). */
import { readFileSync } from 'node:fs';
import { getFips } from 'node:crypto';

export interface BuildInfo {
  /** `dev` unless built from a tagged release */
  version: string;
  commit: string;
  buildDate: string;
  node: string;
  os: string;
  arch: string;
  fips: boolean;
}

let cached: BuildInfo | undefined;

/** Read once; a missing or unreadable file means an unstamped development build. */
export function buildInfo(): BuildInfo {
  if (cached) return cached;
  let stamped: Partial<Pick<BuildInfo, 'version' | 'commit' | 'buildDate'>> = {};
  try {
    // dist/src/build-info.js → dist/build-info.json
    stamped = JSON.parse(readFileSync(new URL('../build-info.json', import.meta.url), 'utf8')) as typeof stamped;
  } catch {
    stamped = {};
  }
  cached = {
    version: typeof stamped.version === 'string' && stamped.version !== '' ? stamped.version : 'dev',
    commit: typeof stamped.commit === 'string' ? stamped.commit : 'unknown',
    buildDate: typeof stamped.buildDate === 'string' ? stamped.buildDate : 'unknown',
    node: process.version,
    os: process.platform,
    arch: process.arch,
    fips: getFips() === 1,
  };
  return cached;
}
