/**
 * `artifactLocation.uri` of a reported artifact (SARIF 2.1.0 §3.4.3, §3.10; RFC 3986). A finding's
 * `artifact_uri` is either an absolute URI (it has a scheme) or a file path relative to the
 * repository root, as tools write it: `./src\a.ts`, `docs/my file #1 ü.md`, `C:\src\a.ts`. Paths are
 * normalised and every character outside RFC 3986 `pchar` is percent-encoded (UTF-8 octets), so `#`
 * and `?` stay part of the file name instead of starting a fragment or query (the spec's SARIF1002,
 * and GitHub opened the wrong file). A path that leaves the root (`../outside/secret.txt`) or names
 * no file has no location: the encoder falls back to the subject's synthetic location.
 */

/** Where a reported artifact points: a relative reference under SRCROOT, an absolute URI, or nothing (with why). */
export type ArtifactUri = { uri: string; relative: boolean } | { dropped: string };

const HEX = /^[0-9A-Fa-f]{2}$/;
const SCHEME = /^[A-Za-z][A-Za-z0-9+.-]*:/;
// A Windows drive letter: one letter and a colon (RFC 3986 would read it as a scheme).
const DRIVE = /^[A-Za-z]:/;
// RFC 3986 unreserved and sub-delims, plus ':' and '@' (pchar without pct-encoded).
const PCHAR = /[A-Za-z0-9\-._~!$&'()*+,;=:@]/;

function pct(c: string): string {
  return [...Buffer.from(c, 'utf8')].map((b) => `%${b.toString(16).toUpperCase().padStart(2, '0')}`).join('');
}

/** Every character of `text` outside `keep` percent-encoded; with `escapes`, a valid `%XX` is kept as an escape. */
function encode(text: string, keep: (c: string) => boolean, escapes: boolean): string {
  let out = '';
  const chars = [...text];
  for (let i = 0; i < chars.length; i++) {
    const c = chars[i] as string;
    if (escapes && c === '%' && HEX.test(`${chars[i + 1] ?? ''}${chars[i + 2] ?? ''}`)) out += c;
    else out += keep(c) ? c : pct(c);
  }
  return out;
}

/**
 * A path's `%XX` escapes decoded, so `%2e%2e` and `%2F` are judged as the `..` and `/` a consumer
 * will decode them to. A run of escapes that is not UTF-8 stays as written (its `%` then encodes).
 */
function decodeEscapes(text: string): string {
  return text.replace(/(?:%[0-9A-Fa-f]{2})+/g, (run) => {
    try {
      return decodeURIComponent(run);
    } catch {
      return run;
    }
  });
}

/** A path segment of a URI: everything but pchar percent-encoded (':' too, so a first segment never reads as a scheme). */
function segment(s: string): string {
  return encode(s, (c) => c !== ':' && PCHAR.test(c), false);
}

/** The path's segments after `.` and `..` (RFC 3986 §5.2.4), or null when a `..` climbs above the start. */
function normalise(segments: readonly string[]): string[] | null {
  const out: string[] = [];
  for (const s of segments) {
    if (s === '' || s === '.') continue;
    if (s === '..') {
      if (out.length === 0) return null;
      out.pop();
    } else out.push(s);
  }
  return out;
}

/** An absolute URI as reported, with only what a URI cannot hold encoded (a second `#`, spaces, non-ASCII…). */
function absoluteUri(text: string): string {
  const hash = text.indexOf('#');
  const main = hash < 0 ? text : text.slice(0, hash);
  const fragment = hash < 0 ? undefined : text.slice(hash + 1);
  const m = /^([A-Za-z][A-Za-z0-9+.-]*:)(\/\/[^/?]*)?(.*)$/s.exec(main) as RegExpExecArray;
  const [, scheme, authority = '', rest = ''] = m;
  // Brackets belong to an IP-literal host only; elsewhere they are data.
  const auth = encode(authority, (c) => c === '/' || c === '[' || c === ']' || PCHAR.test(c), true);
  const tail = encode(rest, (c) => c === '/' || c === '?' || PCHAR.test(c), true);
  const frag = fragment === undefined ? '' : `#${encode(fragment, (c) => c === '/' || c === '?' || PCHAR.test(c), true)}`;
  return `${scheme}${auth}${tail}${frag}`;
}

/** The artifact URI a reported `artifact_uri` becomes (see the module comment). */
export function artifactUri(reported: string): ArtifactUri {
  if (SCHEME.test(reported) && !DRIVE.test(reported)) return { uri: absoluteUri(reported), relative: false };
  // A file path: backslashes are Windows separators (no URI holds one).
  const path = decodeEscapes(reported).replace(/\\/g, '/');
  if (DRIVE.test(path)) {
    if (path[2] !== '/') return { dropped: 'a drive-relative Windows path names no file' };
    const segs = normalise(path.slice(3).split('/'));
    if (segs === null || segs.length === 0) return { dropped: 'the path names no file' };
    return { uri: `file:///${path.slice(0, 2)}/${segs.map(segment).join('/')}`, relative: false };
  }
  if (path.startsWith('//')) {
    // A UNC path: \\server\share\file.
    const [host = '', ...rest] = path.slice(2).split('/');
    const segs = normalise(rest);
    if (host === '' || segs === null || segs.length === 0) return { dropped: 'the path names no file' };
    return { uri: `file://${segment(host)}/${segs.map(segment).join('/')}`, relative: false };
  }
  const segs = normalise(path.split('/'));
  if (segs === null) return { dropped: 'the path leaves the repository root' };
  if (segs.length === 0) return { dropped: 'the path names no file' };
  // An absolute path is outside any checkout we know of: a file URI, not a reference under SRCROOT.
  if (path.startsWith('/')) return { uri: `file:///${segs.map(segment).join('/')}`, relative: false };
  return { uri: segs.map(segment).join('/'), relative: true };
}
