/** Routes of signed policy revisions: validate, explain, dry-run, publish, rollback, versions, active, signing key. */
import { route, type AnyRoute } from '../../contract/route.js';
import { errors } from '../../contract/errors.js';
import { reply } from '../../http/reply.js';
import { tenantOf } from '../../http/request-scope.js';
import { compilePolicies } from './policy-engine.js';
import { activePolicy, compiledFor, getRevision, HOOKS_SURFACE, listRevisions, publishRevision, rollbackRevision } from './policy-store.js';
import { policySigner } from './policy-signing.js';
import { evaluateHook, hookCedarCall } from './pep-service.js';
import {
  EvalBody,
  EvalResult,
  PolicyDocBody,
  Revision,
  RevisionList,
  RevisionParams,
  RollbackBody,
  RollbackResult,
  SigningKey,
  SurfaceQuery,
  ValidateResult,
} from './pep-schemas.js';

const common = { stability: 'beta' as const, tags: ['governance'] };
const BASE = '/v1/m/governance/pdp';

type EvalCtx = Parameters<typeof hookCedarCall>[0] &
  Parameters<typeof tenantOf>[0] & {
    services: { store: import('../../store/store.js').Store };
    body: import('typebox').Static<typeof EvalBody>;
  };

/** Evaluates the body's input against its candidate document, or the surface's active revision. */
async function evaluateBody(ctx: EvalCtx, sliced: boolean) {
  const tenant = tenantOf(ctx);
  const b = ctx.body;
  let compiled;
  let revision: number | null = null;
  if (b.content !== undefined) {
    const r = compilePolicies(b.content);
    if (!r.ok) throw errors.badRequest(`the policy does not compile: ${r.errors.join('; ')}`);
    compiled = compiledFor(b.content);
  } else {
    const a = await activePolicy(ctx.services.store, tenant, b.surface ?? HOOKS_SURFACE);
    if (!a) throw errors.notFound('active policy revision');
    compiled = a.compiled;
    revision = a.revision;
  }
  const ev = evaluateHook(compiled, ctx, tenant, { session_id: '', tool_input: {}, ...b.input }, { sliced });
  return { decision: ev.decision, reason: ev.reason, policies: ev.policies, errors: ev.errors, revision };
}

export const pdpRoutes: AnyRoute[] = [
  route({
    ...common,
    method: 'POST',
    path: `${BASE}/validate`,
    operationId: 'validatePolicy',
    unaudited: 'read-only: compiles a draft policy, stores nothing',
    summary: 'Parse and check a Cedar policy ' + 'document without storing it',
    permission: 'governance:policy:read',
    body: PolicyDocBody,
    response: ValidateResult,
    handler: (ctx) => {
      const r = compilePolicies(ctx.body.content);
      return { valid: r.ok, errors: r.errors, policies: r.policies };
    },
  }),
  route({
    ...common,
    method: 'POST',
    path: `${BASE}/explain`,
    operationId: 'explainPolicyDecision',
    unaudited: 'read-only: evaluates one request against a policy, stores nothing',
    summary: 'Decide a hook input against the whole set (candidate ' + 'or active) and name the policies that decided',
    permission: 'governance:policy:read',
    body: EvalBody,
    response: EvalResult,
    handler: (ctx) => evaluateBody(ctx, false),
  }),
  route({
    ...common,
    method: 'POST',
    path: `${BASE}/dry-run`,
    operationId: 'dryRunPolicy',
    unaudited: 'read-only: evaluates sample requests against a draft, stores nothing',
    summary:
      'Decide a hook input as the decision endpoint would, against a ' + 'candidate document (or the active revision), recording nothing',
    permission: 'governance:policy:read',
    body: EvalBody,
    response: EvalResult,
    handler: (ctx) => evaluateBody(ctx, true),
  }),
  route({
    ...common,
    method: 'POST',
    path: `${BASE}/publish`,
    operationId: 'publishPolicy',
    summary:
      'Compile, sign and store a new revision (replaces the whole document) and make it active; one that does not compile changes ' +
      'nothing (400)',
    permission: 'governance:policy:admin',
    audit: 'policy.publish',
    body: PolicyDocBody,
    response: Revision,
    status: 201,
    handler: async (ctx) => {
      const tenant = tenantOf(ctx);
      const surface = ctx.body.surface ?? HOOKS_SURFACE;
      const input = { surface, content: ctx.body.content, note: ctx.body.note ?? '', actor: ctx.principal?.actor ?? 'system' };
      const rev = await ctx.services.events.withEvents((emit) =>
        publishRevision(ctx.services.store, ctx.services.dataDir, tenant, input, (tx, r) =>
          emit(
            {
              type: 'policy.published',
              tenant,
              subject: `policy_revision/${surface}/${r.revision}`,
              data: { id: `${surface}/${r.revision}`, surface, revision: r.revision, sha256: r.sha256 },
            },
            tx,
          ),
        ),
      );
      await ctx.audit(
        { kind: 'policy_revision', id: `${surface}/${rev.revision}` },
        { surface, revision: rev.revision, sha256: rev.sha256, key_fingerprint: rev.key_fingerprint, note: rev.note },
      );
      return reply.json(rev, 201);
    },
  }),
  route({
    ...common,
    method: 'POST',
    path: `${BASE}/rollback`,
    operationId: 'rollbackPolicy',
    summary: 'Make a stored revision active again',
    permission: 'governance:policy:admin',
    audit: 'policy.rollback',
    body: RollbackBody,
    response: RollbackResult,
    handler: async (ctx) => {
      const tenant = tenantOf(ctx);
      const surface = ctx.body.surface ?? HOOKS_SURFACE;
      const out = await ctx.services.events.withEvents((emit) =>
        rollbackRevision(ctx.services.store, tenant, surface, ctx.body.revision, (tx, o) =>
          emit(
            {
              type: 'policy.rolled_back',
              tenant,
              subject: `policy_revision/${surface}/${o.to.revision}`,
              data: { id: `${surface}/${o.to.revision}`, surface, from: o.from, to: o.to.revision },
            },
            tx,
          ),
        ),
      );
      await ctx.audit(
        { kind: 'policy_revision', id: `${surface}/${out.to.revision}` },
        { surface, from: out.from, to: out.to.revision, sha256: out.to.sha256 },
      );
      return out;
    },
  }),
  route({
    ...common,
    method: 'GET',
    path: `${BASE}/versions`,
    operationId: 'listPolicyVersions',
    summary: 'The revisions of a ' + 'surface, newest first',
    permission: 'governance:policy:read',
    query: SurfaceQuery,
    response: RevisionList,
    handler: async (ctx) => ({ items: await listRevisions(ctx.services.store, tenantOf(ctx), ctx.query.surface ?? HOOKS_SURFACE) }),
  }),
  route({
    ...common,
    method: 'GET',
    path: `${BASE}/versions/{revision}`,
    operationId: 'getPolicyVersion',
    summary: 'One revision: content, sha256, ' + 'key fingerprint, signature',
    permission: 'governance:policy:read',
    params: RevisionParams,
    query: SurfaceQuery,
    response: Revision,
    handler: (ctx) => getRevision(ctx.services.store, tenantOf(ctx), ctx.query.surface ?? HOOKS_SURFACE, Number(ctx.params.revision)),
  }),
  route({
    ...common,
    method: 'GET',
    path: `${BASE}/active`,
    operationId: 'getActivePolicy',
    summary: 'The revision deciding now',
    permission: 'governance:policy:read',
    query: SurfaceQuery,
    response: Revision,
    handler: (ctx) => getRevision(ctx.services.store, tenantOf(ctx), ctx.query.surface ?? HOOKS_SURFACE, 'active'),
  }),
  route({
    ...common,
    method: 'GET',
    path: `${BASE}/signing-key`,
    operationId: 'getPolicySigningKey',
    summary: 'The public key that signs policy revisions ' + '(verify artifacts offline with openssl)',
    permission: 'governance:policy:read',
    response: SigningKey,
    handler: async (ctx) => {
      const s = await policySigner(ctx.services.dataDir);
      return { alg: 'ed25519' as const, fingerprint: s.fingerprint, public_key_pem: s.publicKeyPem };
    },
  }),
];
