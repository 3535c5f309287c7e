/**
 * `GET /v1/m/observability/attestation`: what is provably true about the running build, and what is
 * not. Version, commit and build date come from the build stamp (dist/build-info.json); the
 * lockfile digests are computed now from the files on disk (the declared `package-lock.json` and
 * npm's record of what is installed, `node_modules/.package-lock.json`). Only a build stamped from
 * a tagged release (a semver version) claims release provenance, and even then the answer is a
 * statement by the binary about itself, not a signature: it says so.
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { Services } from '../../serve/services.js';

export interface FileDigest {
  path: string;
  sha256: string;
}

// dist/src/modules/observability/attestation.js → the package root.
const ROOT = new URL('../../../../', import.meta.url);

function digest(rel: string): FileDigest | null {
  const url = new URL(rel, ROOT);
  try {
    return { path: fileURLToPath(url), sha256: createHash('sha256').update(readFileSync(url)).digest('hex') };
  } catch {
    return null;
  }
}

const SEMVER = /^v?\d+\.\d+\.\d+(-[0-9A-Za-z.-]+)?(\+[0-9A-Za-z.-]+)?$/;

/** The attestation answer. */
export function attestation(services: Pick<Services, 'build' | 'engine'>) {
  const b = services.build;
  const release = SEMVER.test(b.version) && b.commit !== 'unknown';
  return {
    version: b.version,
    commit: b.commit,
    build_date: b.buildDate,
    release,
    provenance: release
      ? `stamped as release ${b.version} from commit ${b.commit}; this is the binary's own statement, to be checked against the ` +
        `release's published digests`
      : `a ${b.version === 'dev' ? 'dev' : 'non-release'} build: not proof of provenance (no tagged release stamped it)`,
    lockfile: digest('package-lock.json'),
    installed_lockfile: digest('node_modules/.package-lock.json'),
    runtime: {
      node: b.node,
      os: b.os,
      arch: b.arch,
      fips: b.fips,
      http_engine: services.engine.http,
      crypto_engine: services.engine.crypto,
    },
  };
}
