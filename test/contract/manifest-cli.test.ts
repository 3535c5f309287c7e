/**
 * What users rely on: every `svc` command of an area (a core area or a module namespace) is declared
 * once, in its manifest's `cli`, from the light `cli.ts` beside its index.ts that the CLI index spreads:
 * what a manifest says it adds is what `svc` runs, a module's new command cannot be left out of its
 * manifest, and those files load no route, service or store code, so `svc` starts as light as before.
 */
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import type { CommandClass } from 'clipanion';
import { commands } from '../../src/cli/commands/index.js';
import { buildCli } from '../../src/cli/main.js';
import type { ModuleManifest } from '../../src/contract/manifest.js';
import { allManifests } from '../../src/routes.js';
import { REPO_ROOT } from '../cli/harness.js';

const SRC = path.join(REPO_ROOT, 'src');
const manifests = allManifests();
/** The module namespaces (src/modules/<ns>/, the template aside); the other manifests are core areas. */
const modules = new Set(readdirSync(path.join(SRC, 'modules')).filter((d) => d !== '_template'));

const pathsOf = (c: CommandClass): string[] => (c.paths ?? []).map((p) => p.join(' '));
const named = (c: CommandClass): string => `${c.name} (svc ${pathsOf(c).join(', svc ') || '?'})`;

/** Which manifests declare each command class. */
function declarers(): Map<CommandClass, string[]> {
  const by = new Map<CommandClass, string[]>();
  for (const m of manifests) for (const c of m.cli ?? []) by.set(c, [...(by.get(c) ?? []), m.name]);
  return by;
}

/** Every area's `cli.ts`, as `core/<area>` or `modules/<ns>`. */
function cliFiles(): string[] {
  return ['core', 'modules'].flatMap((top) =>
    readdirSync(path.join(SRC, top))
      .filter((d) => existsSync(path.join(SRC, top, d, 'cli.ts')))
      .map((d) => `${top}/${d}`),
  );
}

/** Every import of a file (static, `export … from`, side-effect and dynamic), with whether it is type-only. */
function importsOf(text: string): Array<{ spec: string; typeOnly: boolean }> {
  const found: Array<{ spec: string; typeOnly: boolean }> = [];
  for (const m of text.matchAll(/^\s*(?:import|export)\b([^;]*?)\bfrom\s*'([^']+)'/gm))
    found.push({ spec: m[2] as string, typeOnly: /^\s*type\b/.test(m[1] as string) });
  for (const m of text.matchAll(/^\s*import\s*'([^']+)'/gm)) found.push({ spec: m[1] as string, typeOnly: false });
  for (const m of text.matchAll(/\bimport\s*\(\s*'([^']+)'/g)) found.push({ spec: m[1] as string, typeOnly: false });
  return found;
}

describe('manifest cli: the commands an area declares are the ones svc registers', () => {
  it('every command class a manifest declares in `cli` is registered by the CLI', () => {
    const registered = new Set(commands);
    const defined = new Set(buildCli().definitions().map((d) => d.path));
    const missing = manifests.flatMap((m) =>
      (m.cli ?? []).flatMap((c) => {
        const gone = !registered.has(c) || pathsOf(c).some((p) => !defined.has(`svc ${p}`));
        return gone ? [`${m.name}: ${named(c)}`] : [];
      }),
    );
    assert.deepEqual(missing, []);
    // Not vacuous: the areas declare most of svc's commands.
    assert.ok(declarers().size > commands.length / 2, `only ${declarers().size} of ${commands.length} commands declared`);
  });

  it('no command class is declared by two manifests, or twice by one; the CLI registers each once', () => {
    const twice = [...declarers()].filter(([, by]) => by.length > 1).map(([c, by]) => `${named(c)}: ${by.join(', ')}`);
    assert.deepEqual(twice, []);
    assert.deepEqual(
      commands.filter((c, i) => commands.indexOf(c) !== i).map(named),
      [],
    );
  });

  it("a command under a manifest's name, or under a group a module's commands use, is declared by some manifest", () => {
    // The groups: every area's name (`svc audit …`, `svc eventing …`) and the first word of every
    // command a module declares (`findings`, `hookpep`, `claude-hook`, `agent`…). A new command in one
    // of them that no manifest lists was forgotten in its area's cli.ts.
    const groups = new Set(manifests.map((m) => m.name));
    for (const m of manifests.filter((x) => modules.has(x.name)))
      for (const c of m.cli ?? []) for (const p of c.paths ?? []) if (p[0]) groups.add(p[0]);
    for (const ns of ['governance', 'eventing', 'accessmap', 'compliance', 'capabilities', 'claude-policy', 'findings', 'security'])
      assert.ok(groups.has(ns), `group ${ns} is not derived from the manifests`);
    const declared = declarers();
    const forgotten = commands.filter((c) => !declared.has(c) && (c.paths ?? []).some((p) => groups.has(p[0] ?? '')));
    assert.deepEqual(forgotten.map(named), []);
  });

  it("each area's cli.ts is its manifest's `cli`, and every manifest's commands come from one", async () => {
    const files = cliFiles();
    const byName = new Map<string, ModuleManifest>(manifests.map((m) => [m.name, m]));
    for (const area of files) {
      const name = area.split('/')[1] as string;
      if (name === '_template') continue; // registered nowhere (test/architecture.test.ts)
      const manifest = byName.get(name);
      assert.ok(manifest, `src/${area}/cli.ts: no manifest named ${name}`);
      const mod = (await import(new URL(`../../src/${area}/cli.js`, import.meta.url).href)) as Record<string, unknown>;
      const lists = Object.values(mod).filter((v) => Array.isArray(v));
      assert.equal(lists.length, 1, `src/${area}/cli.ts exports one command array`);
      assert.equal(manifest.cli, lists[0], `${name}: the manifest's cli is not the array of src/${area}/cli.ts`);
    }
    const withCommands = manifests.filter((m) => (m.cli ?? []).length > 0).map((m) => m.name);
    const withoutFile = withCommands.filter((n) => !files.some((f) => f.endsWith(`/${n}`)));
    assert.deepEqual(withoutFile, []);
  });

  it('each src/modules/*/cli.ts and src/core/*/cli.ts imports only from src/cli/ (or types): no route, service or store code', () => {
    const files = cliFiles();
    assert.ok(files.length >= modules.size, `only ${files.length} cli.ts files`);
    const heavy = files.flatMap((area) => {
      const file = path.join(SRC, area, 'cli.ts');
      return importsOf(readFileSync(file, 'utf8')).flatMap(({ spec, typeOnly }) => {
        if (typeOnly) return [];
        const under = spec.startsWith('.') ? path.relative(SRC, path.resolve(path.dirname(file), spec)).split(path.sep) : [];
        return under[0] === 'cli' ? [] : [`src/${area}/cli.ts → ${spec}`];
      });
    });
    assert.deepEqual(heavy, []);
  });
});
