/**
 * Source line width: no line of the TypeScript sources, tests, benchmarks or scripts is longer than
 * 140 characters, except the few listed below that cannot be broken without changing what they say.
 */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { REPO_ROOT } from './helpers/server.js';

const MAX_WIDTH = 140;

/** Lines allowed past the limit: file, a piece of the line that identifies it, and why it cannot be broken. */
const ALLOWED: ReadonlyArray<{ file: string; contains: string; reason: string }> = [
  {
    file: 'test/core/connectors/routes.test.ts',
    contains: '/format "xml" is not accepted for notification connector format;',
    reason: 'a regex literal matching one whole error message; split, it would no longer say which message',
  },
];

function filesUnder(dir: string, ext: string, recurse: boolean): string[] {
  return readdirSync(dir)
    .sort()
    .flatMap((name) => {
      const full = path.join(dir, name);
      if (statSync(full).isDirectory()) return recurse ? filesUnder(full, ext, true) : [];
      return name.endsWith(ext) ? [full] : [];
    });
}

function sourceFiles(): string[] {
  return [
    ...filesUnder(path.join(REPO_ROOT, 'src'), '.ts', true),
    ...filesUnder(path.join(REPO_ROOT, 'test'), '.ts', true),
    ...filesUnder(path.join(REPO_ROOT, 'bench'), '.ts', true),
    ...filesUnder(path.join(REPO_ROOT, 'scripts'), '.mjs', false),
  ].map((f) => path.relative(REPO_ROOT, f).split(path.sep).join('/'));
}

/** Every line over the limit as `file:line (width)`, with the allow-list entry it matches, if any. */
function longLines(files: readonly string[]): Array<{ where: string; allowed: (typeof ALLOWED)[number] | undefined }> {
  return files.flatMap((file) =>
    readFileSync(path.join(REPO_ROOT, file), 'utf8')
      .split('\n')
      .flatMap((line, i) => {
        const width = [...line].length;
        if (width <= MAX_WIDTH) return [];
        const allowed = ALLOWED.find((a) => a.file === file && line.includes(a.contains));
        return [{ where: `${file}:${i + 1} (${width})`, allowed }];
      }),
  );
}

describe('source style', () => {
  const files = sourceFiles();
  const long = longLines(files);

  it('reads the sources of every checked folder', () => {
    for (const dir of ['src/', 'test/', 'bench/', 'scripts/']) assert.ok(files.some((f) => f.startsWith(dir)), `no file under ${dir}`);
    assert.ok(files.includes('test/style.test.ts'));
  });

  it(`no line is longer than ${MAX_WIDTH} characters`, () => {
    const offenders = long.filter((l) => l.allowed === undefined).map((l) => l.where);
    assert.deepEqual(offenders, [], `lines over ${MAX_WIDTH} characters:\n${offenders.join('\n')}`);
  });

  it('every allow-list entry still names a long line (a fixed line leaves the list)', () => {
    const stale = ALLOWED.filter((a) => !long.some((l) => l.allowed === a)).map((a) => `${a.file}: ${a.contains}`);
    assert.deepEqual(stale, []);
  });
});
