/**
 * `PUT|DELETE /v1/m/identity/sso/identities/{user_id}`: an administrator sets or removes the provider
 * subject an account is linked to (superadmin). A login whose verified e-mail names an account
 * linked to another subject is refused with 409 `sso_identity_conflict` and both subjects in the
 * ledger (docs/sso.md); the relink here is how that person, after a provider migration, gets in again.
 * Beta (/openapi.beta.json), beside the SSO login routes under /v1/m/identity.
 */
import Type from 'typebox';
import { Text, Uuid } from '../../contract/common.js';
import { errors } from '../../contract/errors.js';
import { route, type AnyRoute } from '../../contract/route.js';
import { reply } from '../../http/reply.js';
import { nowTimestamp } from '../../ledger/time.js';
import { findUser } from '../../auth/identity-store.js';
import { isUniqueViolation } from '../../store/store-error.js';
import { readSetting } from './console-state.js';
import { ssoSettingsOf, type SsoSettings } from './sso-settings.js';

const common = { stability: 'beta' as const, tags: ['identity'], permission: 'system:admin' };
const Params = Type.Object({ user_id: Uuid }, { additionalProperties: false });
const RelinkBody = Type.Object({ subject: Text({ minLength: 1, maxLength: 255 }) }, { additionalProperties: false });
const Identity = Type.Object(
  { user_id: Type.String(), issuer: Type.String(), subject: Type.String(), password_disabled: Type.Boolean() },
  { additionalProperties: false },
);

export const ssoIdentityRoutes: AnyRoute[] = [
  route({
    ...common,
    method: 'PUT',
    path: '/v1/m/identity/sso/identities/{user_id}',
    operationId: 'relinkSsoIdentity',
    summary: 'Link an account to a subject at the configured OpenID provider, replacing its link (after a provider migration)',
    audit: 'sso.relink',
    auditChain: 'system',
    params: Params,
    body: RelinkBody,
    response: Identity,
    handler: async (ctx) => {
      const row = await readSetting<SsoSettings>(ctx.services, 'sso');
      if (!row) throw errors.notFound('sso configuration');
      const cfg = ssoSettingsOf(row.value);
      const userId = ctx.params.user_id.toLowerCase();
      const subject = ctx.body.subject;
      const now = nowTimestamp();
      const done = await ctx.services.store
        .transaction(async (tx) => {
          const user = await findUser(tx, userId);
          if (!user) throw errors.notFound('user');
          const taken = await tx
            .selectFrom('sso_identities')
            .select('user_id')
            .where('issuer', '=', cfg.issuer)
            .where('subject', '=', subject)
            .executeTakeFirst();
          if (taken && taken.user_id !== userId)
            throw errors.conflict(`subject ${subject} is linked to another account (${taken.user_id}); unlink it first`);
          const prev = await tx.selectFrom('sso_identities').selectAll().where('user_id', '=', userId).executeTakeFirst();
          const passwordDisabled = prev ? Number(prev.password_disabled) === 1 : cfg.disable_password_login;
          if (prev)
            await tx.updateTable('sso_identities').set({ issuer: cfg.issuer, subject }).where('user_id', '=', userId).execute();
          else
            await tx
              .insertInto('sso_identities')
              .values({
                user_id: userId,
                issuer: cfg.issuer,
                subject,
                password_disabled: passwordDisabled ? 1 : 0,
                created_at: now,
                last_login_at: now,
              })
              .execute();
          return { prev, passwordDisabled };
        })
        .catch((err: unknown) => {
          if (isUniqueViolation(err)) throw errors.conflict(`subject ${subject} is linked to another account`);
          throw err;
        });
      await ctx.audit(
        { kind: 'user', id: userId },
        {
          issuer: cfg.issuer,
          subject,
          previous_issuer: done.prev?.issuer ?? null,
          previous_subject: done.prev?.subject ?? null,
        },
      );
      ctx.services.identity?.invalidate();
      return { user_id: userId, issuer: cfg.issuer, subject, password_disabled: done.passwordDisabled };
    },
  }),
  route({
    ...common,
    method: 'DELETE',
    path: '/v1/m/identity/sso/identities/{user_id}',
    operationId: 'unlinkSsoIdentity',
    summary: 'Remove an account’s link to the OpenID provider; its next SSO login links again only by the linking rule',
    audit: 'sso.unlink',
    auditChain: 'system',
    params: Params,
    status: 204,
    handler: async (ctx) => {
      const userId = ctx.params.user_id.toLowerCase();
      const prev = await ctx.services.store.transaction(async (tx) => {
        const row = await tx.selectFrom('sso_identities').selectAll().where('user_id', '=', userId).executeTakeFirst();
        if (!row) return undefined;
        await tx.deleteFrom('sso_identities').where('user_id', '=', userId).execute();
        return row;
      });
      if (!prev) throw errors.notFound('sso identity');
      await ctx.audit({ kind: 'user', id: userId }, { issuer: prev.issuer, subject: prev.subject });
      ctx.services.identity?.invalidate();
      return reply.empty(204);
    },
  }),
];
