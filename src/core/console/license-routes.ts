/** `GET|POST|DELETE /v1/console/license` and `POST /v1/console/update-check`; superadmin. */
import Type from 'typebox';
import { MultilineText, Text } from '../../contract/common.js';
import { errors } from '../../contract/errors.js';
import { route, type AnyRoute } from '../../contract/route.js';
import { reply } from '../../http/reply.js';
import { nowTimestamp } from '../../ledger/time.js';
import type { Principal } from '../../auth/principal.js';
import { SignedDocError } from './signed-doc.js';
import { LICENSE_GOVERNS, licenseStatus, verifyLicense, type License } from './license.js';
import { readSetting } from './console-state.js';
import { checkForUpdate } from './update-check.js';

const common = { stability: 'stable' as const, tags: ['console'], permission: 'system:admin' };
const LicenseView = Type.Object(
  {
    installed: Type.Boolean(),
    status: Type.Union([Type.Literal('none'), Type.Literal('valid'), Type.Literal('expired'), Type.Literal('invalid')]),
    license_id: Type.Union([Type.String(), Type.Null()]),
    holder: Type.Union([Type.String(), Type.Null()]),
    limits: Type.Record(Type.String(), Type.Number()),
    issued_at: Type.Union([Type.String(), Type.Null()]),
    expires_at: Type.Union([Type.String(), Type.Null()]),
    installed_at: Type.Union([Type.String(), Type.Null()]),
    reason: Type.Union([Type.String(), Type.Null()]),
    governs: Type.String(),
  },
  { additionalProperties: false },
);
const InstallBody = Type.Object(
  { license: MultilineText({ minLength: 2, maxLength: 65536, description: 'the license file as given by the vendor (JSON text)' }) },
  { additionalProperties: false },
);
const UpdateAnswer = Type.Object(
  {
    status: Type.Union([Type.Literal('unknown'), Type.Literal('current'), Type.Literal('update_available')]),
    running_version: Type.String(),
    latest_version: Type.Union([Type.String(), Type.Null()]),
    released_at: Type.Union([Type.String(), Type.Null()]),
    url: Type.Union([Type.String(), Type.Null()]),
    checked_at: Type.String(),
    reason: Type.Union([Type.String(), Type.Null()]),
  },
  { additionalProperties: false },
);

function principalOf(ctx: { principal?: Principal }): Principal {
  if (!ctx.principal) throw errors.unauthenticated();
  return ctx.principal;
}

const NONE = {
  installed: false,
  status: 'none' as const,
  license_id: null,
  holder: null,
  limits: {},
  issued_at: null,
  expires_at: null,
  installed_at: null,
  reason: null,
  governs: LICENSE_GOVERNS,
};

function view(lic: License, installedAt: string) {
  return {
    installed: true,
    status: licenseStatus(lic),
    license_id: lic.license_id,
    holder: lic.holder,
    limits: lic.limits,
    issued_at: lic.issued_at,
    expires_at: lic.expires_at,
    installed_at: installedAt,
    reason: null,
    governs: LICENSE_GOVERNS,
  };
}

export const licenseRoutes: AnyRoute[] = [
  route({
    ...common,
    method: 'GET',
    path: '/v1/console/license',
    operationId: 'getLicense',
    summary: 'The installed license, verified again now: holder, limits, expiry; never gates the ledger or exports',
    response: LicenseView,
    handler: async (ctx) => {
      const stored = await readSetting<{ text: string }>(ctx.services, 'license');
      if (!stored) return NONE;
      try {
        return view(verifyLicense(stored.value.text), stored.updated_at);
      } catch (err) {
        return { ...NONE, installed: true, status: 'invalid' as const, installed_at: stored.updated_at, reason: (err as Error).message };
      }
    },
  }),
  route({
    ...common,
    method: 'POST',
    path: '/v1/console/license',
    operationId: 'installLicense',
    summary: 'Install (or replace) the license file after verifying its Ed25519 signature and expiry',
    audit: 'license.install',
    auditChain: 'system',
    body: InstallBody,
    response: LicenseView,
    bodyLimit: 80 * 1024,
    handler: async (ctx) => {
      const p = principalOf(ctx);
      let lic: License;
      try {
        lic = verifyLicense(ctx.body.license);
      } catch (err) {
        if (err instanceof SignedDocError) throw errors.badRequest(`license refused: ${err.message}`);
        throw err;
      }
      if (licenseStatus(lic) === 'expired') throw errors.badRequest(`license refused: it expired at ${lic.expires_at}`);
      const now = nowTimestamp();
      await ctx.services.store.transaction(async (tx) => {
        const value = JSON.stringify({ text: ctx.body.license, license_id: lic.license_id });
        const r = await tx.updateTable('console_settings').set({ value, updated_at: now }).where('key', '=', 'license').executeTakeFirst();
        if (Number(r.numUpdatedRows) === 0)
          await tx.insertInto('console_settings').values({ key: 'license', value, updated_at: now }).execute();
      });
      await ctx.audit({ kind: 'license', id: lic.license_id }, { holder: lic.holder, expires_at: lic.expires_at, limits: lic.limits });
      return view(lic, now);
    },
  }),
  route({
    ...common,
    method: 'DELETE',
    path: '/v1/console/license',
    operationId: 'removeLicense',
    summary: 'Remove the installed license (nothing else changes: the license gates no feature)',
    audit: 'license.remove',
    auditChain: 'system',
    status: 204,
    handler: async (ctx) => {
      const p = principalOf(ctx);
      const removed = await ctx.services.store.transaction(async (tx) => {
        const row = await tx.selectFrom('console_settings').select('value').where('key', '=', 'license').executeTakeFirst();
        if (!row) return null;
        await tx.deleteFrom('console_settings').where('key', '=', 'license').execute();
        return (JSON.parse(row.value) as { license_id?: string }).license_id ?? '';
      });
      if (removed === null) throw errors.notFound('license');
      await ctx.audit({ kind: 'license', id: removed });
      return reply.empty(204);
    },
  }),
  route({
    ...common,
    method: 'POST',
    path: '/v1/console/update-check',
    operationId: 'updateCheck',
    summary:
      'Compare the running version with the signed release manifest at SERVICE_UPDATE_MANIFEST_URL; without one: unknown, no network',
    audit: 'console.update_check',
    auditChain: 'system',
    response: UpdateAnswer,
    timeoutMs: 20_000,
    handler: async (ctx) => {
      const p = principalOf(ctx);
      const answer = await checkForUpdate(ctx.services.build.version);
      await ctx.audit(
        { kind: 'release', id: answer.latest_version ?? '' },
        {
          status: answer.status,
          running_version: answer.running_version,
        },
      );
      return answer;
    },
  }),
];
