/** `GET|PUT|DELETE /v1/console/secrets`: the sealed secrets store (DECISIONS.md "Sealed secrets"); superadmin. */
import Type from 'typebox';
import { MultilineText } from '../../contract/common.js';
import { errors } from '../../contract/errors.js';
import { route, type AnyRoute } from '../../contract/route.js';
import { reply } from '../../http/reply.js';
import type { Principal } from '../../auth/principal.js';
import { deleteSecret, listSecrets, putSecret, SECRET_NAME_PATTERN } from './secrets-service.js';

const common = { stability: 'stable' as const, tags: ['console'], permission: 'system:admin' };
const Name = Type.String({ pattern: SECRET_NAME_PATTERN, description: 'lower-case letters, digits, . _ -; referenced as secret:<name>' });
const SecretView = Type.Object(
  {
    name: Type.String(),
    hint: Type.String({ description: 'last 4 characters at most; empty for values of 8 characters or fewer' }),
    created_at: Type.String(),
    updated_at: Type.String(),
    references: Type.Array(Type.String()),
  },
  { additionalProperties: false },
);
const PutBody = Type.Object({ name: Name, value: MultilineText({ minLength: 1, maxLength: 16384 }) }, { additionalProperties: false });
const NameQuery = Type.Object({ name: Name }, { additionalProperties: false });

function principalOf(ctx: { principal?: Principal }): Principal {
  if (!ctx.principal) throw errors.unauthenticated();
  return ctx.principal;
}

export const secretsRoutes: AnyRoute[] = [
  route({
    ...common,
    method: 'GET',
    path: '/v1/console/secrets',
    operationId: 'listSecrets',
    summary: 'Names, hints and references of the sealed secrets; never a value',
    response: Type.Object({ items: Type.Array(SecretView) }, { additionalProperties: false }),
    handler: async (ctx) => ({ items: await listSecrets(ctx.services.store) }),
  }),
  route({
    ...common,
    method: 'PUT',
    path: '/v1/console/secrets',
    operationId: 'putSecret',
    summary: 'Create or replace a named secret, sealed at rest (AES-256-GCM); the answer never carries the value',
    audit: 'secret.put',
    auditChain: 'system',
    body: PutBody,
    response: SecretView,
    bodyLimit: 32 * 1024,
    handler: async (ctx) => {
      const p = principalOf(ctx);
      const { view, created } = await putSecret(ctx.services.store, ctx.services.sealer, ctx.body.name, ctx.body.value);
      // The record names the secret and the key that sealed it, never the value nor its hint.
      await ctx.audit({ kind: 'secret', id: ctx.body.name }, { created, sealing_key: ctx.services.sealer.keyId });
      return view;
    },
  }),
  route({
    ...common,
    method: 'DELETE',
    path: '/v1/console/secrets',
    operationId: 'deleteSecret',
    summary: 'Delete a named secret; every configuration that references it fails closed from now on',
    audit: 'secret.delete',
    auditChain: 'system',
    query: NameQuery,
    status: 204,
    handler: async (ctx) => {
      const p = principalOf(ctx);
      const refs = await deleteSecret(ctx.services.store, ctx.query.name);
      if (refs === null) throw errors.notFound('secret');
      await ctx.audit({ kind: 'secret', id: ctx.query.name }, { references: refs });
      return reply.empty(204);
    },
  }),
];
