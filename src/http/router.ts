/**
 * Path matching over route templates (`/v1/agents/{id}`). Static paths hit a Map; templated
 * ones are grouped by segment count and compared segment by segment, static segments first,
 * so `/v1/users/superadmins` wins over `/v1/users/{id}`. No uWS here (STYLE.md rule 2).
 */

export interface Match<T> {
  value: T;
  params: Record<string, string>;
}

export type Lookup<T> =
  | { kind: 'found'; match: Match<T> }
  | { kind: 'method_not_allowed'; allow: string[] }
  | { kind: 'not_found' };

interface Templated<T> {
  segments: string[];
  /** index → param name, for `{name}` segments */
  paramAt: Map<number, string>;
  staticCount: number;
  byMethod: Map<string, T>;
}

const PARAM = /^\{([A-Za-z_][A-Za-z0-9_]*)\}$/;

/** A method × path table with 404/405 distinction. */
export class Router<T> {
  private readonly statics = new Map<string, Map<string, T>>();
  private readonly templated = new Map<number, Templated<T>[]>();

  /** Register a handler; throws on a duplicate (method, template) or a malformed template. */
  add(method: string, template: string, value: T): void {
    if (!template.startsWith('/')) throw new Error(`route path must start with "/": ${template}`);
    const segments = template.split('/').slice(1);
    const paramAt = new Map<number, string>();
    segments.forEach((s, i) => {
      const m = PARAM.exec(s);
      if (m) paramAt.set(i, m[1] as string);
      else if (s.includes('{') || s.includes('}')) throw new Error(`malformed path segment "${s}" in ${template}`);
    });
    if (paramAt.size === 0) {
      let byMethod = this.statics.get(template);
      if (!byMethod) this.statics.set(template, (byMethod = new Map()));
      if (byMethod.has(method)) throw new Error(`duplicate route ${method} ${template}`);
      byMethod.set(method, value);
      return;
    }
    const list = this.templated.get(segments.length) ?? [];
    let entry = list.find((e) => e.segments.join('/') === segments.join('/'));
    if (!entry) {
      entry = { segments, paramAt, staticCount: segments.length - paramAt.size, byMethod: new Map() };
      list.push(entry);
      // More static segments first: the most specific template wins.
      list.sort((a, b) => b.staticCount - a.staticCount);
      this.templated.set(segments.length, list);
    }
    if (entry.byMethod.has(method)) throw new Error(`duplicate route ${method} ${template}`);
    entry.byMethod.set(method, value);
  }

  /** Every (method, template, value) the router holds: what the server answers besides 404/405. */
  *entries(): Generator<{ method: string; template: string; value: T }> {
    for (const [template, byMethod] of this.statics) for (const [method, value] of byMethod) yield { method, template, value };
    for (const list of this.templated.values()) {
      for (const e of list) {
        const template = '/' + e.segments.map((s, i) => (e.paramAt.has(i) ? `{${e.paramAt.get(i) as string}}` : s)).join('/');
        for (const [method, value] of e.byMethod) yield { method, template, value };
      }
    }
  }

  /** Find the handler for a decoded-segment path. */
  find(method: string, path: string): Lookup<T> {
    const lookupMethod = method === 'HEAD' ? 'GET' : method;
    const byMethod = this.statics.get(path);
    if (byMethod) {
      const value = byMethod.get(lookupMethod);
      if (value !== undefined) return { kind: 'found', match: { value, params: {} } };
    }
    const segments = path.split('/').slice(1);
    let allow: string[] | undefined = byMethod ? [...byMethod.keys()] : undefined;
    for (const entry of this.templated.get(segments.length) ?? []) {
      const params = matchSegments(entry, segments);
      if (!params) continue;
      const value = entry.byMethod.get(lookupMethod);
      if (value !== undefined) return { kind: 'found', match: { value, params } };
      allow = [...(allow ?? []), ...entry.byMethod.keys()];
    }
    if (allow && allow.length > 0) return { kind: 'method_not_allowed', allow: [...new Set(allow)].sort() };
    return { kind: 'not_found' };
  }
}

function matchSegments<T>(entry: Templated<T>, segments: string[]): Record<string, string> | undefined {
  const params: Record<string, string> = {};
  for (let i = 0; i < segments.length; i++) {
    const seg = segments[i] as string;
    const name = entry.paramAt.get(i);
    if (name !== undefined) {
      if (seg === '') return undefined;
      let decoded: string;
      try {
        decoded = decodeURIComponent(seg);
      } catch {
        return undefined;
      }
      params[name] = decoded;
    } else if (seg !== entry.segments[i]) {
      return undefined;
    }
  }
  return params;
}
