/** The console's byte budget (docs/web.md) and the sizes of what the build ships, gzip level 9. */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import { REPO_ROOT } from '../helpers/server.js';

/** Kilobytes (1024 bytes), gzip level 9. */
export const BUDGET_KB = { entry: 40, css: 8, allJs: 180 };

export function bundleSizes(): { entryJs: number; css: number; allJs: number; files: Record<string, number> } {
  const dir = path.join(REPO_ROOT, 'dist', 'web', 'assets');
  const files: Record<string, number> = {};
  for (const f of readdirSync(dir)) files[f] = gzipSync(readFileSync(path.join(dir, f)), { level: 9 }).length;
  const sum = (pred: (f: string) => boolean) => Object.entries(files).filter(([f]) => pred(f)).reduce((a, [, n]) => a + n, 0);
  return {
    entryJs: sum((f) => /^index-.*\.js$/.test(f)),
    css: sum((f) => f.endsWith('.css')),
    allJs: sum((f) => f.endsWith('.js')),
    files,
  };
}

