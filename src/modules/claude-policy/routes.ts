/** Routes of managed agent settings as signed revisions: `/v1/m/claude-policy/…` (claude-policy-service.ts holds the rules). */
import { route, type AnyRoute } from '../../contract/route.js';
import { reply } from '../../http/reply.js';
import { tenantOf } from '../../http/request-scope.js';
import { policySigner } from '../governance/index.js';
import { artifact, checkin, distribution, dryRun, publish, validate, version, versions } from './claude-policy-service.js';
import {
  Artifact,
  ArtifactQuery,
  CheckinBody,
  CheckinResult,
  Distribution,
  DocBody,
  DryRunResult,
  PublishBody,
  Revision,
  RevisionList,
  RevisionParams,
  SigningKey,
  SurfaceQuery,
  ValidateResult,
} from './schemas.js';

const common = { stability: 'beta' as const, tags: ['claude-policy'] };
const BASE = '/v1/m/claude-policy';

export const claudePolicyRoutes: AnyRoute[] = [
  route({
    ...common,
    method: 'POST',
    path: `${BASE}/validate`,
    operationId: 'validateClaudePolicy',
    unaudited: 'read-only: checks a draft policy, stores nothing',
    summary: 'Check a managed settings document (shape, hook ' + 'event names, inline credentials) without storing it',
    permission: 'claude-policy:policy:read',
    body: DocBody,
    response: ValidateResult,
    handler: (ctx) => validate(ctx.body.surface, ctx.body.content),
  }),
  route({
    ...common,
    method: 'POST',
    path: `${BASE}/dry-run`,
    operationId: 'dryRunClaudePolicy',
    unaudited: 'read-only: evaluates sample calls against a draft, stores nothing',
    summary: 'What publish would sign and what it changes ' + 'against the published revision, recording nothing',
    permission: 'claude-policy:policy:read',
    body: DocBody,
    response: DryRunResult,
    handler: (ctx) => dryRun(ctx.services.store, tenantOf(ctx), ctx.body.surface, ctx.body.content),
  }),
  route({
    ...common,
    method: 'POST',
    path: `${BASE}/publish`,
    operationId: 'publishClaudePolicy',
    summary:
      'Sign and store a new revision of a surface (replaces the whole document) and publish it; invalid documents and inline ' +
      'credentials change nothing (400)',
    permission: 'claude-policy:policy:admin',
    audit: 'claude_policy.publish',
    body: PublishBody,
    response: Revision,
    status: 201,
    handler: async (ctx) => {
      const tenant = tenantOf(ctx);
      const { surface } = ctx.body;
      const input = { surface, content: ctx.body.content, note: ctx.body.note ?? '', actor: ctx.principal?.actor ?? 'system' };
      // The event is written in the revision's transaction (durable log), announced after the commit.
      const rev = await ctx.services.events.withEvents((emit) =>
        publish(ctx.services.store, ctx.services.dataDir, tenant, input, (tx, r) => {
          const rid = `${surface}/${r.revision}`;
          const data = { id: rid, surface, revision: r.revision, sha256: r.sha256 };
          return emit({ type: 'claude_policy.published', tenant, subject: `claude_policy_revision/${rid}`, data }, tx);
        }),
      );
      const id = `${surface}/${rev.revision}`;
      await ctx.audit(
        { kind: 'claude_policy_revision', id },
        { surface, revision: rev.revision, sha256: rev.sha256, key_fingerprint: rev.key_fingerprint, note: rev.note },
      );
      return reply.json(rev, 201);
    },
  }),
  route({
    ...common,
    method: 'GET',
    path: `${BASE}/versions`,
    operationId: 'listClaudePolicyVersions',
    summary: 'The signed revisions of a surface, newest ' + 'first (the published one marked active)',
    permission: 'claude-policy:policy:read',
    query: SurfaceQuery,
    response: RevisionList,
    handler: async (ctx) => ({ items: await versions(ctx.services.store, tenantOf(ctx), ctx.query.surface) }),
  }),
  route({
    ...common,
    method: 'GET',
    path: `${BASE}/versions/{revision}`,
    operationId: 'getClaudePolicyVersion',
    summary: 'One revision: artifact, sha256, ' + 'key fingerprint, signature',
    permission: 'claude-policy:policy:read',
    params: RevisionParams,
    query: SurfaceQuery,
    response: Revision,
    handler: (ctx) => version(ctx.services.store, tenantOf(ctx), ctx.query.surface, Number(ctx.params.revision)),
  }),
  route({
    ...common,
    method: 'GET',
    path: `${BASE}/artifact`,
    operationId: 'getClaudePolicyArtifact',
    summary: 'The signed artifact a host installs (default the published ' + 'revision), with the public key that verifies it offline',
    permission: 'claude-policy:policy:read',
    query: ArtifactQuery,
    response: Artifact,
    handler: (ctx) =>
      artifact(
        ctx.services.store,
        ctx.services.dataDir,
        tenantOf(ctx),
        ctx.query.surface,
        ctx.query.revision === undefined ? undefined : Number(ctx.query.revision),
      ),
  }),
  route({
    ...common,
    method: 'GET',
    path: `${BASE}/signing-key`,
    operationId: 'getClaudePolicySigningKey',
    summary: 'The public key that signs managed ' + 'settings revisions (the policy-signing key)',
    permission: 'claude-policy:policy:read',
    response: SigningKey,
    handler: async (ctx) => {
      const s = await policySigner(ctx.services.dataDir);
      return { alg: 'ed25519' as const, fingerprint: s.fingerprint, public_key_pem: s.publicKeyPem };
    },
  }),
  route({
    ...common,
    method: 'POST',
    path: `${BASE}/checkins`,
    operationId: 'checkinClaudePolicy',
    summary: 'A host reports the bytes it holds; answers ' + 'whether they verify and are the published revision',
    permission: 'claude-policy:checkin:write',
    audit: 'claude_policy.checkin',
    body: CheckinBody,
    response: CheckinResult,
    handler: async (ctx) => {
      const tenant = tenantOf(ctx);
      const b = ctx.body;
      const id = `${b.surface}/${b.host}`;
      const input = {
        host: b.host,
        surface: b.surface,
        bytes: Buffer.from(b.content_b64, 'base64'),
        ...(b.signature !== undefined ? { signature: b.signature } : {}),
        actor: ctx.principal?.actor ?? 'system',
      };
      const out = await ctx.services.events.withEvents((emit) =>
        checkin(ctx.services.store, ctx.services.dataDir, tenant, input, (tx, o) =>
          emit(
            {
              type: 'claude_policy.checked_in',
              tenant,
              subject: `claude_policy_host/${id}`,
              data: {
                id,
                host: b.host,
                surface: b.surface,
                sha256: o.sha256,
                verified: o.verified,
                current: o.current,
                revision: o.revision,
              },
            },
            tx,
          ),
        ),
      );
      await ctx.audit(
        { kind: 'claude_policy_host', id },
        { host: b.host, surface: b.surface, sha256: out.sha256, verified: out.verified, current: out.current, revision: out.revision },
      );
      return out;
    },
  }),
  route({
    ...common,
    method: 'GET',
    path: `${BASE}/distribution`,
    operationId: 'getClaudePolicyDistribution',
    summary: 'Published vs observed: the published ' + 'revision and what each host last reported',
    permission: 'claude-policy:policy:read',
    query: SurfaceQuery,
    response: Distribution,
    handler: (ctx) => distribution(ctx.services.store, tenantOf(ctx), ctx.query.surface),
  }),
];
