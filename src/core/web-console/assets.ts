/**
 * The web console's built files (`npm run build` → `dist/web/`, from the sources in `web/`),
 * loaded once into memory with a gzip copy of each: the bundle is a few hundred kilobytes, and
 * answering from memory keeps `svc serve` free of file-system reads per request.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { gzipSync } from 'node:zlib';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

// dist/src/core/web-console/ → dist/web/
export const WEB_DIST = fileURLToPath(new URL('../../../web/', import.meta.url));

const TYPES: Readonly<Record<string, string>> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.woff2': 'font/woff2',
  '.json': 'application/json',
  '.txt': 'text/plain; charset=utf-8',
};

export interface Asset {
  body: Buffer;
  gzip: Buffer;
  type: string;
}

export interface ConsoleBundle {
  index: Asset;
  /** `assets/<name>` (content-hashed by the build) → file */
  assets: Map<string, Asset>;
  /** files at the root of the bundle other than index.html (favicon) */
  root: Map<string, Asset>;
}

function load(file: string): Asset {
  const body = readFileSync(file);
  return { body, gzip: gzipSync(body, { level: 9 }), type: TYPES[path.extname(file)] ?? 'application/octet-stream' };
}

let bundle: ConsoleBundle | null | undefined;

/** The bundle, or null when the console was not built (e.g. `tsc` alone). */
export function consoleBundle(dir = WEB_DIST): ConsoleBundle | null {
  if (bundle !== undefined && dir === WEB_DIST) return bundle;
  const indexFile = path.join(dir, 'index.html');
  let loaded: ConsoleBundle | null = null;
  if (existsSync(indexFile)) {
    const assets = new Map<string, Asset>();
    const assetDir = path.join(dir, 'assets');
    if (existsSync(assetDir)) for (const name of readdirSync(assetDir)) assets.set(name, load(path.join(assetDir, name)));
    const root = new Map<string, Asset>();
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      if (entry.isFile() && entry.name !== 'index.html') root.set(entry.name, load(path.join(dir, entry.name)));
    }
    loaded = { index: load(indexFile), assets, root };
  }
  if (dir === WEB_DIST) bundle = loaded;
  return loaded;
}
