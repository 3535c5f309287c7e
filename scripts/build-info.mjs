#!/usr/bin/env node
// Stamps the build: writes dist/build-info.json = {version, commit, buildDate}, read at runtime by
// src/build-info.ts (`svc version`, /v1/server-info, OpenAPI info.version).
//   version   the tag when HEAD is exactly a `v*` tag, else `dev` (spec Versioning 4: an untagged
//             build reports a development version and is no proof of provenance)
//   commit    `git rev-parse HEAD`, or `unknown`
//   buildDate ISO 8601 UTC; honours SOURCE_DATE_EPOCH (reproducible-builds.org) when set
// It never fails for want of git (tarball builds, no git binary, no commits yet).
// Usage: node scripts/build-info.mjs [output-file]   (default: <repo>/dist/build-info.json)
import { execFileSync } from 'node:child_process';
import { mkdirSync, renameSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const out = resolve(process.argv[2] ?? join(root, 'dist', 'build-info.json'));

function git(...args) {
  try {
    return execFileSync('git', args, { cwd: root, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
  } catch {
    return '';
  }
}

const tag = git('describe', '--tags', '--exact-match', '--match', 'v*', 'HEAD');
const commit = git('rev-parse', '--verify', '--quiet', 'HEAD');
const epoch = Number(process.env.SOURCE_DATE_EPOCH);
const date = Number.isInteger(epoch) && epoch > 0 ? new Date(epoch * 1000) : new Date();

const info = {
  version: /^v\S+$/.test(tag) ? tag : 'dev',
  commit: /^[0-9a-f]{40,64}$/.test(commit) ? commit : 'unknown',
  buildDate: date.toISOString(),
};

mkdirSync(dirname(out), { recursive: true });
const temp = `${out}.${process.pid}.tmp`;
writeFileSync(temp, `${JSON.stringify(info, null, 2)}\n`);
renameSync(temp, out);
process.stdout.write(`build-info: ${info.version} ${info.commit} ${info.buildDate}\n`);
