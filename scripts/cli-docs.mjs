#!/usr/bin/env node
// Regenerates the command reference in docs/cli.md from the built CLI's clipanion definitions.
// Usage: npx tsc -p tsconfig.json && node scripts/cli-docs.mjs   (test/cli/reference.test.ts checks it)
import { readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const { buildCli } = await import(join(root, 'dist/src/cli/main.js'));
const { commands } = await import(join(root, 'dist/src/cli/commands/index.js'));
const { renderCliReference, REFERENCE_BEGIN, REFERENCE_END } = await import(join(root, 'dist/src/cli/reference.js'));

const file = join(root, 'docs', 'cli.md');
const doc = readFileSync(file, 'utf8');
const start = doc.indexOf(REFERENCE_BEGIN);
const end = doc.indexOf(REFERENCE_END);
if (start < 0 || end < start) throw new Error(`docs/cli.md lacks the generated-section markers`);
writeFileSync(file, doc.slice(0, start) + renderCliReference(buildCli(), commands) + doc.slice(end + REFERENCE_END.length));
process.stdout.write('docs/cli.md: command reference regenerated\n');
