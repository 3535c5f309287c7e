/**
 * Finds credentials written inline in a configuration document, so a document that is signed and
 * copied to every host (managed agent settings) or stored as a capability configuration never
 * carries one. What counts (docs/governance.md "What counts as an inline credential"):
 *
 * - a string value under a key that names a credential (`token`, `secret`, `password`, `passwd`,
 *   `apikey`/`api_key`/`api-key`, `access_key`, `private_key`, `credential`, `authorization`,
 *   `cookie`, `client_secret`, compared without `-`/`_` and case), unless the value is a reference
 *   (`secret:<name>`, `${VAR}`, `$VAR`), empty, or a plain number or boolean (`MAX_TOKENS: "8000"`);
 *   keys that name *where* a credential comes from (`…helper`, `…file`, `…path`, `…command`, `…url`,
 *   `…env`, `…var`, `…name`, `…ref`, `…mode`) are not credentials themselves;
 * - any string that has the shape of a well-known credential whatever its key: `Bearer`/`Basic`
 *   with a literal, `sk-…`, GitHub (`ghp_`, `gho_`, `ghu_`, `ghs_`, `ghr_`, `github_pat_`), GitLab
 *   (`glpat-`), Slack (`xox?-`), AWS access key ids (`AKIA…`), Google API keys (`AIza…`), our own
 *   `svck_`/`svcs_`/`svcst_` tokens, PEM private keys, and a URL with a password in its userinfo;
 * - in an argument list, the value after a flag that names a credential (`--token abc`,
 *   `--password=abc`).
 *
 * Findings name the place (a JSON path) and the rule, never the value.
 */

export interface InlineCredential {
  /** JSON path of the value, e.g. `env.ANTHROPIC_API_KEY` or `mcpServers.db.args[3]` */
  path: string;
  reason: string;
}

const KEY_WORDS = [
  'token',
  'secret',
  'password',
  'passwd',
  'apikey',
  'accesskey',
  'privatekey',
  'credential',
  'authorization',
  'cookie',
  'clientsecret',
];
const SOURCE_SUFFIXES = [
  'helper',
  'file',
  'path',
  'command',
  'url',
  'env',
  'var',
  'name',
  'ref',
  'mode',
  'type',
  'header',
  'policy',
  'method',
];

const SHAPES: Array<[RegExp, string]> = [
  [/^\s*(bearer|basic|token)\s+(?!\$\{?[A-Za-z_])\S{8,}/i, 'an Authorization value with a literal credential'],
  [/\bsk-[A-Za-z0-9_-]{16,}/, 'an API key (sk-…)'],
  [/\b(ghp|gho|ghu|ghs|ghr)_[A-Za-z0-9]{20,}|\bgithub_pat_[A-Za-z0-9_]{20,}/, 'a GitHub token'],
  [/\bglpat-[A-Za-z0-9_-]{20,}/, 'a GitLab token'],
  [/\bxox[abposr]-[A-Za-z0-9-]{10,}/, 'a Slack token'],
  [/\b(AKIA|ASIA)[0-9A-Z]{16}\b/, 'an AWS access key id'],
  [/\bAIza[0-9A-Za-z_-]{35}\b/, 'a Google API key'],
  [/\bsvc(k|s|st)_[A-Z2-7_]{20,}/, 'an svc token'],
  [/-----BEGIN [A-Z ]*PRIVATE KEY-----/, 'a PEM private key'],
  [/^[a-z][a-z0-9+.-]*:\/\/[^/\s:@]+:(?!\$\{?[A-Za-z_])[^/\s@]+@/i, 'a URL with a password'],
];

const norm = (k: string): string => k.toLowerCase().replace(/[-_.\s]/g, '');

/** True when a key names a credential (not where one comes from). */
export function isCredentialKey(key: string): boolean {
  const k = norm(key);
  if (SOURCE_SUFFIXES.some((s) => k.endsWith(s))) return false;
  return KEY_WORDS.some((w) => k.includes(w));
}

/** True when a value points somewhere instead of holding the secret. */
export function isReference(value: string): boolean {
  return (
    /^secret:[a-z0-9][a-z0-9._-]{0,99}$/.test(value) ||
    /^\$\{[A-Za-z_][A-Za-z0-9_]*(:-[^}]*)?\}$/.test(value) ||
    /^\$[A-Za-z_][A-Za-z0-9_]*$/.test(value)
  );
}

function literal(value: string): boolean {
  const v = value.trim();
  return v !== '' && !isReference(v) && !/^(-?\d+(\.\d+)?|true|false)$/i.test(v);
}

function shapeOf(value: string): string | null {
  for (const [re, why] of SHAPES) if (re.test(value)) return why;
  return null;
}

const keyPath = (base: string, key: string): string =>
  /^[A-Za-z_][A-Za-z0-9_-]*$/.test(key) ? (base ? `${base}.${key}` : key) : `${base}[${JSON.stringify(key)}]`;

/** Every inline credential in `doc` (any JSON value), by path; empty when there is none. */
export function findInlineCredentials(doc: unknown): InlineCredential[] {
  const out: InlineCredential[] = [];
  const walk = (v: unknown, path: string, key: string | null, depth: number): void => {
    if (depth > 32) return;
    if (typeof v === 'string') {
      const shape = shapeOf(v);
      if (shape) out.push({ path, reason: `looks like ${shape}` });
      else if (key !== null && isCredentialKey(key) && literal(v))
        out.push({
          path,
          reason: `"${key}" names a credential and holds a literal value (use a reference such as secret:<name> or \${ENV_VAR})`,
        });
      return;
    }
    if (Array.isArray(v)) {
      v.forEach((item, i) => {
        const p = `${path}[${i}]`;
        const prev = i > 0 ? v[i - 1] : undefined;
        if (typeof item === 'string') {
          const eq = /^--?([A-Za-z][A-Za-z0-9_-]*)=(.*)$/s.exec(item);
          if (eq && isCredentialKey(eq[1] as string) && literal(eq[2] as string) && !shapeOf(item)) {
            out.push({ path: p, reason: `the flag --${eq[1]} carries a literal credential` });
            return;
          }
          if (
            typeof prev === 'string' &&
            /^--?[A-Za-z]/.test(prev) &&
            !prev.includes('=') &&
            isCredentialKey(prev.replace(/^--?/, '')) &&
            literal(item) &&
            !shapeOf(item)
          ) {
            out.push({ path: p, reason: `the value of ${prev} is a literal credential` });
            return;
          }
        }
        walk(item, p, null, depth + 1);
      });
      return;
    }
    if (typeof v === 'object' && v !== null) {
      for (const [k, child] of Object.entries(v as Record<string, unknown>)) walk(child, keyPath(path, k), k, depth + 1);
    }
  };
  walk(doc, '', null, 0);
  return out;
}
