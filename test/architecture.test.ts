/**
 * The layering rules of ARCHITECTURE.md, checked on the source: core never builds on a beta module,
 * a module reaches another module only through that module's `index.ts`, no import circle exists
 * (type imports included; madge, pinned), and the store names no module's tables outside its
 * migrations and schema types.
 */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import madge from 'madge';
import { REPO_ROOT } from './helpers/server.js';
import { allManifests } from '../src/routes.js';
import { storage } from '../src/storage.js';

const SRC = path.join(REPO_ROOT, 'src');

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const full = path.join(dir, name);
    return statSync(full).isDirectory() ? sourceFiles(full) : name.endsWith('.ts') ? [full] : [];
  });
}

/** Every relative import specifier of a file (static, dynamic and `export … from`), resolved to a path under src. */
function importsOf(file: string): string[] {
  const text = readFileSync(file, 'utf8');
  const specs = [...text.matchAll(/(?:from\s+|import\s*\(\s*|import\s+)'(\.[^']+)'/g)].map((m) => m[1] as string);
  return specs.map((s) => path.relative(SRC, path.resolve(path.dirname(file), s.replace(/\.js$/, '.ts'))));
}

describe('architecture', () => {
  it('no file under src/core imports from src/modules', () => {
    const bad = sourceFiles(path.join(SRC, 'core')).flatMap((f) =>
      importsOf(f)
        .filter((i) => i.startsWith('modules/'))
        .map((i) => `${path.relative(SRC, f)} → ${i}`),
    );
    assert.deepEqual(bad, []);
  });

  it("a module imports another module only through that module's index.ts", () => {
    const bad = sourceFiles(path.join(SRC, 'modules')).flatMap((f) => {
      const own = path.relative(SRC, f).split(path.sep)[1];
      return importsOf(f)
        .filter((i) => i.startsWith('modules/') && i.split('/')[1] !== own && i.split('/').slice(2).join('/') !== 'index.ts')
        .map((i) => `${path.relative(SRC, f)} → ${i}`);
    });
    assert.deepEqual(bad, []);
  });

  it('src has no import circles, type imports included', async () => {
    const graph = await madge(SRC, { fileExtensions: ['ts'], tsConfig: path.join(REPO_ROOT, 'tsconfig.json') });
    assert.deepEqual(graph.circular(), []);
  });
  it('every migration file is registered by exactly one area, on its own backend', () => {
    for (const backend of ['sqlite', 'postgres'] as const) {
      const files = readdirSync(path.join(SRC, 'store', backend, 'migrations')).filter((f) => f.endsWith('.ts'));
      const numbers = files.map((f) => Number(/^[a-z]+-(\d{3})-/.exec(f)?.[1])).sort((a, b) => a - b);
      assert.deepEqual(numbers, storage[backend].map((m) => m.version), backend);
    }
    const owners = storage.sqlite.map((m) => storage.ownerOf(m.version));
    assert.equal(owners.includes(undefined), false);
  });

  it("the store knows no module's tables: nothing under src/store but migrations and schema types names the access map's edges", () => {
    const bad = sourceFiles(path.join(SRC, 'store'))
      .map((f) => path.relative(SRC, f))
      .filter((f) => !/\/migrations\/|\/schema[^/]*\.ts$/.test(f) && readFileSync(path.join(SRC, f), 'utf8').includes('access_edges'));
    assert.deepEqual(bad, []);
  });

  it('every module folder has an index.ts whose manifest src/routes.ts lists; the template is registered nowhere', () => {
    const listed = new Set(allManifests().map((m) => m.name));
    const folders = readdirSync(path.join(SRC, 'modules')).filter((d) => d !== '_template');
    for (const d of folders) {
      assert.equal(statSync(path.join(SRC, 'modules', d, 'index.ts')).isFile(), true, d);
      assert.equal(listed.has(d), true, `${d} is not listed in src/routes.ts`);
    }
    const importers = sourceFiles(SRC).filter((f) => importsOf(f).some((i) => i.startsWith('modules/_template/')));
    assert.deepEqual(importers.map((f) => path.relative(SRC, f)).filter((f) => !f.startsWith('modules/_template/')), []);
  });
});
