/**
 * Test-side resolver: flattens the official OCSF 1.8.0 definition files (class + `extends` chain up
 * to `base_event`, `$include`d profiles, dictionary attributes and types, objects with their own
 * `extends` chains) into a JSON Schema that ajv validates. Strict: `additionalProperties: false`
 * everywhere except the free-form `object` type (`unmapped`), required attributes, dictionary type
 * regexes / ranges / max lengths, enums (merged along the chain, as the OCSF server does), object
 * `at_least_one` / `just_one` constraints, and class-computed `class_uid`, `category_uid`,
 * `type_uid`. An attribute that belongs to a profile is allowed only when that profile is applied.
 */
import { existsSync, readFileSync, readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Ajv, type ValidateFunction } from 'ajv';

type Def = Record<string, unknown>;
type Attr = Record<string, unknown> & { profile?: string | null; enum?: Record<string, unknown> };
type JsonSchema = Record<string, unknown>;

/**
 * The schema directory: the OCSF 1.8.0 definitions vendored in `test/vectors/ocsf-schema-1.8.0`
 * (only the files these tests read, with OCSF's LICENSE and NOTICE), or `SVC_OCSF_SCHEMA_DIR` to
 * validate against a full checkout of the schema instead.
 */
export function ocsfSchemaDir(): string {
  const env = process.env['SVC_OCSF_SCHEMA_DIR'];
  if (env !== undefined && env !== '') {
    if (!existsSync(path.join(env, 'dictionary.json'))) throw new Error(`SVC_OCSF_SCHEMA_DIR=${env} holds no OCSF dictionary.json`);
    return env;
  }
  let dir = path.dirname(fileURLToPath(import.meta.url));
  while (!existsSync(path.join(dir, 'package.json')) && path.dirname(dir) !== dir) dir = path.dirname(dir);
  const vendored = path.join(dir, 'test', 'vectors', 'ocsf-schema-1.8.0');
  if (!existsSync(path.join(vendored, 'dictionary.json'))) throw new Error(`OCSF schema not found at ${vendored}`);
  return vendored;
}

function readJson(file: string): Def {
  return JSON.parse(readFileSync(file, 'utf8')) as Def;
}

function walk(dir: string): string[] {
  return readdirSync(dir).flatMap((n) => {
    const p = path.join(dir, n);
    return statSync(p).isDirectory() ? walk(p) : p.endsWith('.json') ? [p] : [];
  });
}

function isObj(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

/** Deep merge (OCSF semantics: later wins, maps such as `enum` merge key by key). */
function merge<T extends Record<string, unknown>>(a: T | undefined, b: Record<string, unknown> | undefined): T {
  const out: Record<string, unknown> = { ...(a ?? {}) };
  for (const [k, v] of Object.entries(b ?? {})) {
    out[k] = isObj(v) && isObj(out[k]) ? merge(out[k] as Record<string, unknown>, v) : v;
  }
  return out as T;
}

/** A loaded OCSF schema tree. */
export class OcsfSchema {
  readonly dir: string;
  private readonly dictionary: Record<string, Attr>;
  private readonly types: Record<string, Def>;
  private readonly categories: Record<string, Def>;
  private readonly events = new Map<string, Def>();
  private readonly objects = new Map<string, Def>();
  private readonly validators = new Map<string, ValidateFunction>();

  constructor(dir = ocsfSchemaDir()) {
    this.dir = dir;
    const dict = readJson(path.join(dir, 'dictionary.json'));
    this.dictionary = dict['attributes'] as Record<string, Attr>;
    this.types = (dict['types'] as Def)['attributes'] as Record<string, Def>;
    this.categories = readJson(path.join(dir, 'categories.json'))['attributes'] as Record<string, Def>;
    for (const f of walk(path.join(dir, 'events'))) {
      const d = readJson(f);
      this.events.set(d['name'] as string, d);
    }
    for (const f of walk(path.join(dir, 'objects'))) {
      const d = readJson(f);
      this.objects.set(d['name'] as string, d);
    }
  }

  /** Attributes of one definition level: `$include`d profile attributes, then its own on top. */
  private levelAttributes(def: Def): Record<string, Attr> {
    const own = { ...((def['attributes'] as Record<string, Attr> | undefined) ?? {}) };
    const includes = (own['$include'] as unknown as string[] | undefined) ?? [];
    delete own['$include'];
    let attrs: Record<string, Attr> = {};
    for (const inc of includes) {
      const prof = readJson(path.join(this.dir, inc));
      const pname = prof['name'] as string;
      for (const [k, v] of Object.entries(prof['attributes'] as Record<string, Attr>)) {
        attrs[k] = merge(attrs[k], { ...v, profile: pname });
      }
    }
    for (const [k, v] of Object.entries(own)) attrs[k] = merge(attrs[k], v);
    return attrs;
  }

  /** The `extends` chain of an event class or object, root first. */
  private chain(kind: 'event' | 'object', name: string): Def[] {
    const table = kind === 'event' ? this.events : this.objects;
    const out: Def[] = [];
    let cur: string | undefined = name;
    while (cur !== undefined && cur !== 'object') {
      const d = table.get(cur);
      if (d === undefined) throw new Error(`OCSF ${kind} ${cur} not found`);
      out.unshift(d);
      cur = d['extends'] as string | undefined;
    }
    return out;
  }

  private resolved(kind: 'event' | 'object', name: string): { attrs: Record<string, Attr>; chain: Def[] } {
    const chain = this.chain(kind, name);
    let attrs: Record<string, Attr> = {};
    for (const d of chain) {
      for (const [k, v] of Object.entries(this.levelAttributes(d))) attrs[k] = merge(attrs[k], v);
    }
    return { attrs, chain };
  }

  /** Category uid and class uid of an event class (`category.uid * 1000 + class.uid`). */
  classIds(name: string): { category_uid: number; class_uid: number } {
    const chain = this.chain('event', name);
    const cat = [...chain].reverse().find((d) => typeof d['category'] === 'string')?.['category'] as string;
    const catUid = this.categories[cat]?.['uid'] as number;
    const own = chain[chain.length - 1]?.['uid'] as number;
    return { category_uid: catUid, class_uid: catUid * 1000 + own };
  }

  /** The profiles an event class supports (union along its chain). */
  classProfiles(name: string): string[] {
    return [...new Set(this.chain('event', name).flatMap((d) => (d['profiles'] as string[] | undefined) ?? []))];
  }

  /** Class name for a class uid. */
  classNameByUid(uid: number): string {
    for (const name of this.events.keys()) {
      if (this.events.get(name)?.['uid'] !== undefined && this.classIds(name).class_uid === uid) return name;
    }
    throw new Error(`no OCSF class with uid ${uid}`);
  }

  private scalarSchema(typeName: string): JsonSchema {
    const t = this.types[typeName];
    if (t === undefined) throw new Error(`unknown OCSF type ${typeName}`);
    const base: JsonSchema =
      typeName === 'string_t' ? { type: 'string' }
      : typeName === 'integer_t' || typeName === 'long_t' ? { type: 'integer' }
      : typeName === 'float_t' ? { type: 'number' }
      : typeName === 'boolean_t' ? { type: 'boolean' }
      : typeName === 'json_t' ? {}
      : this.scalarSchema(t['type'] as string);
    const s: JsonSchema = { ...base };
    if (typeof t['regex'] === 'string') s['pattern'] = t['regex'];
    if (typeof t['max_len'] === 'number') s['maxLength'] = t['max_len'];
    const range = t['range'] as [number, number] | undefined;
    if (range) Object.assign(s, { minimum: range[0], maximum: range[1] });
    return s;
  }

  private attrSchema(attr: Attr, defs: Record<string, JsonSchema>, profiles: ReadonlySet<string>): JsonSchema {
    const typeName = attr['type'] as string;
    let s: JsonSchema;
    if (typeName === 'object') s = { type: 'object' }; // free-form container (`unmapped`)
    else if (typeName.endsWith('_t')) {
      s = this.scalarSchema(typeName);
      if (attr.enum !== undefined) {
        const keys = Object.keys(attr.enum);
        s = { ...s, enum: s['type'] === 'integer' ? keys.map(Number) : keys };
      }
    } else {
      this.objectDef(typeName, defs, profiles);
      s = { $ref: `#/$defs/${typeName}` };
    }
    return attr['is_array'] === true ? { type: 'array', items: s } : s;
  }

  /** Build the properties of a resolved attribute set, honouring applied profiles. */
  private properties(
    attrs: Record<string, Attr>, defs: Record<string, JsonSchema>, profiles: ReadonlySet<string>,
  ): { properties: Record<string, JsonSchema>; required: string[] } {
    const properties: Record<string, JsonSchema> = {};
    const required: string[] = [];
    for (const [k, own] of Object.entries(attrs)) {
      if (typeof own.profile === 'string' && !profiles.has(own.profile)) continue;
      const dict = this.dictionary[k];
      if (dict === undefined) throw new Error(`attribute ${k} missing from dictionary`);
      const attr = merge<Attr>(dict, own);
      properties[k] = this.attrSchema(attr, defs, profiles);
      if (attr['requirement'] === 'required') required.push(k);
    }
    return { properties, required };
  }

  private constraints(chain: Def[]): JsonSchema {
    const c = [...chain].reverse().find((d) => isObj(d['constraints']))?.['constraints'] as Def | undefined;
    const s: JsonSchema = {};
    const all: JsonSchema[] = [];
    const atLeast = c?.['at_least_one'] as string[] | undefined;
    if (atLeast) all.push({ anyOf: atLeast.map((k) => ({ required: [k] })) });
    const justOne = c?.['just_one'] as string[] | undefined;
    if (justOne) all.push({ oneOf: justOne.map((k) => ({ required: [k] })) });
    if (all.length > 0) s['allOf'] = all;
    return s;
  }

  private objectDef(name: string, defs: Record<string, JsonSchema>, profiles: ReadonlySet<string>): void {
    if (defs[name] !== undefined) return;
    defs[name] = {}; // placeholder breaks recursion (process.parent_process → process)
    const { attrs, chain } = this.resolved('object', name);
    const { properties, required } = this.properties(attrs, defs, profiles);
    defs[name] = { type: 'object', properties, required, additionalProperties: false, ...this.constraints(chain) };
  }

  /** JSON Schema of an event class with the given profiles applied. */
  classSchema(className: string, appliedProfiles: readonly string[]): JsonSchema {
    const profiles = new Set(appliedProfiles);
    const defs: Record<string, JsonSchema> = {};
    const { attrs, chain } = this.resolved('event', className);
    const { properties, required } = this.properties(attrs, defs, profiles);
    const ids = this.classIds(className);
    const activityIds = Object.keys(merge(this.dictionary['activity_id']?.enum, attrs['activity_id']?.enum)).map(Number);
    properties['class_uid'] = { const: ids.class_uid };
    properties['category_uid'] = { const: ids.category_uid };
    properties['activity_id'] = { type: 'integer', enum: activityIds };
    properties['type_uid'] = { type: 'integer', enum: activityIds.map((a) => ids.class_uid * 100 + a) };
    return {
      type: 'object', properties, required, additionalProperties: false, $defs: defs, ...this.constraints(chain),
    };
  }

  /** Validate one event; returns ajv error strings (empty when valid) plus cross-field checks. */
  validate(event: Record<string, unknown>): string[] {
    const classUid = event['class_uid'];
    if (typeof classUid !== 'number') return ['class_uid missing'];
    const className = this.classNameByUid(classUid);
    const meta = isObj(event['metadata']) ? event['metadata'] : {};
    const profiles = Array.isArray(meta['profiles']) ? (meta['profiles'] as string[]) : [];
    const errors: string[] = [];
    const supported = this.classProfiles(className);
    for (const p of profiles) if (!supported.includes(p)) errors.push(`profile ${p} not supported by ${className}`);
    const key = `${className}|${[...profiles].sort().join(',')}`;
    let v = this.validators.get(key);
    if (v === undefined) {
      const ajv = new Ajv({ allErrors: true, strict: false, unicodeRegExp: false });
      v = ajv.compile(this.classSchema(className, profiles));
      this.validators.set(key, v);
    }
    if (!v(event)) errors.push(...(v.errors ?? []).map((e) => `${e.instancePath || '/'} ${e.message ?? ''} ${JSON.stringify(e.params)}`));
    if (event['type_uid'] !== classUid * 100 + (event['activity_id'] as number)) errors.push('type_uid != class_uid*100+activity_id');
    return errors;
  }
}
