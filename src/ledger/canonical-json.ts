/** RFC 8785 (JCS) canonical JSON for ledger `meta`: the stored text is the hashed text (DECISIONS.md "Audit ledger"). */
import canonicalize from 'canonicalize';

/** Thrown when a value cannot be represented as canonical JSON meta. */
export class CanonicalJsonError extends TypeError {
  override readonly name = 'CanonicalJsonError';
}

/**
 * Canonical text of a meta object. Only plain objects are accepted at the top level; values must be
 * JSON data (null, boolean, finite number, string, array, plain object). Object properties whose
 * value is `undefined` are dropped as JSON.stringify does; anything else non-JSON is refused rather
 * than silently changed, because the result is signed.
 */
export function canonicalMeta(meta: unknown): string {
  if (!isPlainObject(meta)) throw new CanonicalJsonError('meta must be a JSON object');
  assertJsonValue(meta, '$', 0);
  let text: string | undefined;
  try {
    text = canonicalize(meta);
  } catch (err) {
    // The library refuses lone surrogates (RFC 8785 §3.2.2.2 requires valid Unicode).
    throw new CanonicalJsonError(`meta is not canonicalisable: ${(err as Error).message}`);
  }
  if (text === undefined) throw new CanonicalJsonError('meta is not serialisable');
  return text;
}

/** Canonical text of meta as UTF-8 bytes, the exact bytes the meta commitment covers. */
export function canonicalMetaBytes(meta: unknown): Buffer {
  return Buffer.from(canonicalMeta(meta), 'utf8');
}

/** True when `text` parses to a JSON object whose canonical form is exactly `text`. */
export function isCanonicalMetaText(text: string): boolean {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return false;
  }
  try {
    return canonicalMeta(parsed) === text;
  } catch {
    return false;
  }
}

const MAX_DEPTH = 64;

function isPlainObject(v: unknown): v is Record<string, unknown> {
  if (v === null || typeof v !== 'object' || Array.isArray(v)) return false;
  const proto: unknown = Object.getPrototypeOf(v);
  return proto === Object.prototype || proto === null;
}

function assertJsonValue(v: unknown, path: string, depth: number): void {
  if (depth > MAX_DEPTH) throw new CanonicalJsonError(`meta nests deeper than ${MAX_DEPTH} at ${path}`);
  switch (typeof v) {
    case 'string':
    case 'boolean':
      return;
    case 'number':
      // RFC 8785 §3.2.2.3: NaN and ±Infinity have no JSON form.
      if (!Number.isFinite(v)) throw new CanonicalJsonError(`non-finite number at ${path}`);
      return;
    case 'object': {
      if (v === null) return;
      if (Array.isArray(v)) {
        for (let i = 0; i < v.length; i++) {
          const item: unknown = v[i];
          if (item === undefined) throw new CanonicalJsonError(`undefined array element at ${path}[${i}]`);
          assertJsonValue(item, `${path}[${i}]`, depth + 1);
        }
        return;
      }
      if (!isPlainObject(v)) throw new CanonicalJsonError(`non-plain object at ${path}`);
      for (const key of Object.keys(v)) {
        const item = v[key];
        if (item === undefined) continue;
        assertJsonValue(item, `${path}.${key}`, depth + 1);
      }
      return;
    }
    default:
      throw new CanonicalJsonError(`${typeof v} is not JSON at ${path}`);
  }
}
