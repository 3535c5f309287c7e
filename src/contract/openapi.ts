/**
 * OpenAPI 3.1 documents derived from the route table: `/openapi.json` (stable core) and
 * `/openapi.beta.json` (module routes), and `svc openapi [--beta]` prints the same without a server.
 */
import type { TSchema } from 'typebox';
import { buildInfo } from '../build-info.js';
import { ErrorEnvelope } from './common.js';
import { ERROR_CATALOG, errorCodes } from './errors.js';
import { PUBLIC, type AnyRoute } from './route.js';

type Json = Record<string, unknown>;

const TENANT_HEADER = {
  name: 'X-Service-Tenant',
  in: 'header',
  required: false,
  description: 'Tenant to act in (uuid). Implied when the token is bound to one tenant or the principal has exactly one.',
  schema: { type: 'string', format: 'uuid' },
};

/** Error statuses every authenticated route may answer (spec: module routes declare 400 401 403 404 409 429). */
const AUTHED_ERRORS = [400, 401, 403, 404, 409, 429, 500];
const PUBLIC_ERRORS = [400, 404, 429, 500];

/** Build one of the two documents. */
export function buildOpenApiDocument(which: 'stable' | 'beta', routes: readonly AnyRoute[]): Json {
  const selected = routes.filter((r) => r.stability === which && !r.unlisted);
  const paths: Record<string, Json> = {};
  for (const r of selected) {
    const item = (paths[r.path] ??= {});
    item[r.method.toLowerCase()] = operation(r);
  }
  const sortedPaths = Object.fromEntries(
    Object.keys(paths)
      .sort()
      .map((k) => [k, paths[k]]),
  );
  return {
    openapi: '3.1.0',
    jsonSchemaDialect: 'https://spec.openapis.org/oas/3.1/dialect/base',
    info: {
      title: which === 'stable' ? 'svc control plane — core API' : 'svc control plane — module routes (beta)',
      version: buildInfo().version,
      description:
        which === 'stable'
          ? 'The stable core contract, covered by a 24-month stability window. Every non-2xx answer is the error envelope.'
          : 'Beta module routes under /v1/m/<namespace>/. Shapes may change with notice; outside the 24-month window.',
    },
    servers: [{ url: '/' }],
    tags: [...new Set(selected.flatMap((r) => r.tags ?? []))].sort().map((name) => ({ name })),
    paths: sortedPaths,
    components: {
      schemas: { ErrorEnvelope: stripId(ErrorEnvelope) },
      securitySchemes: {
        bearerAuth: { type: 'http', scheme: 'bearer', description: 'Opaque token: session `svcs_…` or API key `svck_…` (not a JWT).' },
      },
      responses: Object.fromEntries(
        [...new Set([...AUTHED_ERRORS, 413, 415, 503])].map((status) => [
          `E${status}`,
          {
            description: `${
              errorCodes()
                .filter((c) => ERROR_CATALOG[c].status === status)
                .join(', ') || 'error'
            }`,
            content: { 'application/json': { schema: { $ref: '#/components/schemas/ErrorEnvelope' } } },
          },
        ]),
      ),
    },
  };
}

function operation(r: AnyRoute): Json {
  const params: Json[] = [];
  for (const [name, schema] of properties(r.params)) params.push({ name, in: 'path', required: true, schema });
  const required = new Set(((r.query as Json | undefined)?.required as string[] | undefined) ?? []);
  for (const [name, schema] of properties(r.query)) params.push({ name, in: 'query', required: required.has(name), schema });
  if (r.permission !== PUBLIC) params.push(TENANT_HEADER);
  const status = String(r.status ?? 200);
  const success: Json = { description: r.summary };
  if (r.produces) success.content = { [r.produces]: { schema: { type: 'string' } } };
  else if (r.response) success.content = { 'application/json': { schema: stripId(r.response) } };
  else if (status !== '204') success.content = { 'application/json': { schema: { type: 'object' } } };
  const responses: Json = { [status]: success };
  for (const s of r.permission === PUBLIC ? PUBLIC_ERRORS : AUTHED_ERRORS) responses[String(s)] = { $ref: `#/components/responses/E${s}` };
  if (r.body) {
    responses['413'] = { $ref: '#/components/responses/E413' };
    responses['415'] = { $ref: '#/components/responses/E415' };
  }
  if (r.path === '/readyz' || r.path === '/pod-readyz') responses['503'] = { $ref: '#/components/responses/E503' };
  const op: Json = {
    operationId: r.operationId,
    summary: r.summary,
    tags: r.tags ?? [],
    parameters: params,
    responses,
    'x-stability': r.stability,
    'x-permission': r.permission,
  };
  if (r.privileged) op['x-privileged-read'] = true;
  // A route that records one of several actions names its own, the first.
  if (r.audit) op['x-audit-action'] = typeof r.audit === 'string' ? r.audit : r.audit[0];
  if (r.body) op.requestBody = { required: true, content: { 'application/json': { schema: stripId(r.body) } } };
  op.security = r.permission === PUBLIC ? [] : [{ bearerAuth: [] }];
  return op;
}

function properties(schema: TSchema | undefined): [string, Json][] {
  const props = (schema as { properties?: Record<string, Json> } | undefined)?.properties;
  return props ? Object.entries(props).map(([k, v]) => [k, stripId(v)]) : [];
}

/** A plain JSON copy without `$id` (ids are for compiled refs, not for inlined copies). */
function stripId(schema: unknown): Json {
  return JSON.parse(JSON.stringify(schema, (k, v) => (k === '$id' ? undefined : v))) as Json;
}
