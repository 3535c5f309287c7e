/**
 * Compiles the route table once, at startup (STYLE.md rule 1): every schema becomes a checker,
 * and a route that cannot be served safely stops `svc serve` with the method and path named.
 */
import { Compile } from 'typebox/compile';
import { explainErrors } from './schema-errors.js';
import type { TSchema } from 'typebox';
import type { AnyRoute } from './route.js';
import { PUBLIC } from './route.js';
import { uuidCanonicalizer, type Canonicalizer } from './canonical.js';
import { boundIntegers } from './integer-bounds.js';

/** A compiled checker plus the schema it came from (coercion needs the schema). */
export interface Checker {
  schema: TSchema;
  check(value: unknown): boolean;
  /** human-readable first errors, e.g. `/limit must be <= 1000` */
  explain(value: unknown): string;
  /** lowercases in place the UUIDs of a value `check` accepted (canonical.ts); absent when the schema holds none */
  canonical?: Canonicalizer;
}

export interface CompiledRoute {
  spec: AnyRoute;
  /** the declared ledger actions (RouteSpec.audit), first the route's own; empty when it declares none */
  auditActions: readonly string[];
  params?: Checker;
  query?: Checker;
  body?: Checker;
  response?: Checker;
}

/** Raised when the route table is not servable; the message names method and path. */
export class RouteTableError extends Error {
  constructor(route: Pick<AnyRoute, 'method' | 'path'>, reason: string) {
    super(`route ${route.method} ${route.path}: ${reason}`);
    this.name = 'RouteTableError';
  }
}

const PERMISSION = /^[a-z][a-z0-9_-]*(:[a-z][a-z0-9_-]*){1,2}$/;
const ACTION = /^[a-z][a-z0-9_]*(\.[a-z][a-z0-9_]*)+$/;
const MUTATING: ReadonlySet<string> = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/** The declared ledger actions of a route, checked: every mutation names its record or why it has none. */
function auditActionsOf(spec: AnyRoute): readonly string[] {
  const actions: readonly string[] = spec.audit === undefined ? [] : typeof spec.audit === 'string' ? [spec.audit] : spec.audit;
  if (spec.unaudited !== undefined) {
    if (actions.length > 0) throw new RouteTableError(spec, 'declares both an audit action and `unaudited`');
    if (spec.unaudited.trim().length < 8) throw new RouteTableError(spec, '`unaudited` must say why the route records nothing');
  } else if (actions.length === 0 && MUTATING.has(spec.method)) {
    throw new RouteTableError(spec, 'a mutation must declare its audit action, or `unaudited` with the reason it records nothing');
  }
  if (spec.audit !== undefined && actions.length === 0) throw new RouteTableError(spec, 'an empty list of audit actions');
  for (const a of actions) if (!ACTION.test(a)) throw new RouteTableError(spec, `audit action "${a}" is not a dotted lower-case verb`);
  if (new Set(actions).size !== actions.length) throw new RouteTableError(spec, 'an audit action is declared twice');
  if (spec.auditChain !== undefined && actions.length === 0) throw new RouteTableError(spec, '`auditChain` without an audit action');
  return actions;
}

/** Compile all routes or throw a RouteTableError naming the first bad one. */
export function compileRoutes(routes: readonly AnyRoute[]): CompiledRoute[] {
  const seenOps = new Set<string>();
  return routes.map((spec) => {
    if (spec.permission !== PUBLIC && !PERMISSION.test(spec.permission)) {
      throw new RouteTableError(
        spec,
        `permission "${spec.permission}" is not <resource>:<verb> or <ns>:<resource>:<verb> (deny by default: a route must declare one)`,
      );
    }
    if (spec.stability === 'beta' && !spec.path.startsWith('/v1/m/')) {
      throw new RouteTableError(spec, 'beta routes live under /v1/m/<namespace>/');
    }
    const auditActions = auditActionsOf(spec);
    if (spec.privileged && auditActions.length === 0) throw new RouteTableError(spec, 'a privileged read must name its audit action');
    if (seenOps.has(spec.operationId)) throw new RouteTableError(spec, `duplicate operationId ${spec.operationId}`);
    seenOps.add(spec.operationId);
    for (const part of ['body', 'query'] as const) {
      const schema = spec[part] as TSchema | undefined;
      if (
        schema &&
        (schema as { type?: unknown }).type === 'object' &&
        (schema as { additionalProperties?: unknown }).additionalProperties !== false
      ) {
        // DECISIONS.md: unknown JSON fields → 400. A typo in a filter must not silently widen a query either.
        throw new RouteTableError(spec, `${part} schema must set additionalProperties: false`);
      }
    }
    const compiled: CompiledRoute = { spec, auditActions };
    for (const part of ['params', 'query', 'body', 'response'] as const) {
      const schema = spec[part] as TSchema | undefined;
      if (!schema) continue;
      // A request's integers fit every store (integer-bounds.ts); answers are the server's own.
      if (part !== 'response') boundIntegers(schema);
      try {
        compiled[part] = makeChecker(schema);
      } catch (err) {
        throw new RouteTableError(spec, `${part} schema does not compile: ${(err as Error).message}`);
      }
    }
    return compiled;
  });
}

/** Compile one schema into a Checker. */
export function makeChecker(schema: TSchema): Checker {
  const validator = Compile(schema);
  const canonical = uuidCanonicalizer(schema);
  return {
    schema,
    ...(canonical !== undefined ? { canonical } : {}),
    check: (value) => validator.Check(value),
    explain: (value) => explainErrors(validator, value),
  };
}
