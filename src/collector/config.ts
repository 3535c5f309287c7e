/**
 * The collector's sources file (`--config`, JSON or YAML):
 *
 *   name: edge-1                 # optional; default the host name
 *   tenant: <uuid>               # optional; the core refuses a token bound to another tenant
 *   sources:
 *     - { type: jsonl, path: /var/log/agent/access.jsonl }
 *     - { type: dir, path: /var/spool/findings }
 *   batch: { max_items: 500, max_bytes: 1048576 }   # optional
 *   poll_ms: 200                 # optional
 *
 * Source names default to `<type>:<path>` and key the spool's cursors, so they must be unique.
 */
import { readFileSync } from 'node:fs';
import { hostname } from 'node:os';
import path from 'node:path';
import { parse } from 'yaml';

export interface SourceConfig {
  type: 'jsonl' | 'dir';
  path: string;
  name: string;
}

export interface CollectorConfig {
  name: string;
  /** sent as x-service-tenant: the tenant this collector means to write to */
  tenant?: string;
  sources: SourceConfig[];
  batchMaxItems: number;
  batchMaxBytes: number;
  pollMs: number;
}

/** Thrown for an unusable config file; the command exits 2 with the message. */
export class CollectorConfigError extends Error {
  override readonly name = 'CollectorConfigError';
}

function int(v: unknown, what: string, min: number, max: number, fallback: number): number {
  if (v === undefined) return fallback;
  if (typeof v !== 'number' || !Number.isInteger(v) || v < min || v > max)
    throw new CollectorConfigError(`${what} must be an integer in ${min}..${max}`);
  return v;
}

/** Parse and check a sources file's text; relative paths resolve against `baseDir`. */
export function parseCollectorConfig(text: string, baseDir: string): CollectorConfig {
  let raw: unknown;
  try {
    raw = parse(text);
  } catch (err) {
    throw new CollectorConfigError(`config is not YAML/JSON: ${(err as Error).message}`);
  }
  if (typeof raw !== 'object' || raw === null) throw new CollectorConfigError('config must be an object with a `sources` list');
  const c = raw as Record<string, unknown>;
  for (const k of Object.keys(c))
    if (!['name', 'tenant', 'sources', 'batch', 'poll_ms'].includes(k))
      throw new CollectorConfigError(`unknown config key ${JSON.stringify(k)}`);
  if (!Array.isArray(c['sources']) || c['sources'].length === 0) throw new CollectorConfigError('config needs a non-empty `sources` list');
  const names = new Set<string>();
  const sources = (c['sources'] as unknown[]).map((s, i) => {
    const src = s as Record<string, unknown>;
    if (src?.['type'] !== 'jsonl' && src?.['type'] !== 'dir') throw new CollectorConfigError(`sources[${i}].type must be "jsonl" or "dir"`);
    if (typeof src['path'] !== 'string' || src['path'] === '') throw new CollectorConfigError(`sources[${i}].path is required`);
    const p = path.resolve(baseDir, src['path']);
    const name = typeof src['name'] === 'string' && src['name'] !== '' ? src['name'] : `${src['type']}:${p}`;
    if (names.has(name)) throw new CollectorConfigError(`two sources are named ${JSON.stringify(name)}`);
    names.add(name);
    return { type: src['type'], path: p, name } as SourceConfig;
  });
  const batch = (c['batch'] ?? {}) as Record<string, unknown>;
  const name = c['name'] === undefined ? hostname() : c['name'];
  if (typeof name !== 'string' || name.length === 0 || name.length > 128) throw new CollectorConfigError('name must be 1..128 characters');
  const tenant = c['tenant'];
  if (
    tenant !== undefined &&
    (typeof tenant !== 'string' || !/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/.test(tenant))
  )
    throw new CollectorConfigError('tenant must be a lowercase UUID');
  return {
    name,
    ...(tenant === undefined ? {} : { tenant: tenant as string }),
    sources,
    batchMaxItems: int(batch['max_items'], 'batch.max_items', 1, 10_000, 500),
    batchMaxBytes: int(batch['max_bytes'], 'batch.max_bytes', 1024, 3 * 1024 * 1024, 1024 * 1024),
    pollMs: int(c['poll_ms'], 'poll_ms', 10, 60_000, 200),
  };
}

/** Read and parse `--config`. */
export function loadCollectorConfig(file: string): CollectorConfig {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    throw new CollectorConfigError(`cannot read --config ${file}: ${(err as Error).message}`);
  }
  return parseCollectorConfig(text, path.dirname(path.resolve(file)));
}
