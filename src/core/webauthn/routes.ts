/**
 * WebAuthn step-up routes (beta, namespace `identity`; docs/step-up.md): register an
 * authenticator for the calling user, then step the calling session up to AAL3 for 15 minutes
 * with an assertion that carries user verification (DECISIONS.md "Assurance"). Sessions only:
 * API keys never reach AAL3. Every change is appended to the system chain.
 */
import Type from 'typebox';
import type { AuthenticationResponseJSON, RegistrationResponseJSON } from '@simplewebauthn/server';
import { Text, Timestamp, Uuid } from '../../contract/common.js';
import { ApiError, errors } from '../../contract/errors.js';
import { route, type AnyRoute } from '../../contract/route.js';
import type { RequestContext } from '../../http/context.js';
import { reply } from '../../http/reply.js';
import { timestampFromDate } from '../../ledger/time.js';
import { currentAal, stepUpSession } from '../../auth/assurance.js';
import { findUser } from '../../auth/identity-store.js';
import type { Principal } from '../../auth/principal.js';
import { AAL3_TTL_MS, identityOf } from '../../auth/runtime.js';
import { finishRegistration, finishStepUp, startRegistration, startStepUp, type CeremonySubject } from '../../auth/webauthn/ceremony.js';
import { credentialView, deleteCredential, listCredentials } from '../../auth/webauthn/credential-store.js';
import { webauthnSettingsFromEnv, type WebauthnSettings } from '../../auth/webauthn/settings.js';

/** Path prefix of the step-up routes. */
export const WEBAUTHN_PREFIX = '/v1/m/identity';

let settingsMemo: WebauthnSettings | undefined;
/** RP settings from `SERVICE_WEBAUTHN_*`, read once per process. */
export function webauthnSettings(): WebauthnSettings {
  settingsMemo ??= webauthnSettingsFromEnv();
  return settingsMemo;
}

const Options = Type.Object(
  { challenge_id: Uuid, public_key: Type.Object({ challenge: Type.String() }, { additionalProperties: true }) },
  { additionalProperties: false },
);
const Credential = Type.Object(
  {
    id: Uuid,
    name: Type.String(),
    transports: Type.Array(Type.String()),
    device_type: Type.String(),
    backed_up: Type.Boolean(),
    created_at: Timestamp,
    last_used_at: Type.Union([Timestamp, Type.Null()]),
  },
  { additionalProperties: false },
);
const B64u = Type.String({ minLength: 1, maxLength: 16_384, pattern: '^[A-Za-z0-9_-]+={0,2}$' });
// The browser's PublicKeyCredential.toJSON() (WebAuthn L3 §5.1.8/§5.1.9); extra members it may add are tolerated.
const AttestationJson = Type.Object(
  {
    id: B64u,
    rawId: B64u,
    type: Type.Literal('public-key'),
    response: Type.Object(
      { clientDataJSON: B64u, attestationObject: B64u, transports: Type.Optional(Type.Array(Text({ maxLength: 32 }), { maxItems: 16 })) },
      { additionalProperties: true },
    ),
    clientExtensionResults: Type.Object({}, { additionalProperties: true }),
    authenticatorAttachment: Type.Optional(Text({ maxLength: 32 })),
  },
  { additionalProperties: true },
);
const AssertionJson = Type.Object(
  {
    id: B64u,
    rawId: B64u,
    type: Type.Literal('public-key'),
    response: Type.Object(
      { clientDataJSON: B64u, authenticatorData: B64u, signature: B64u, userHandle: Type.Optional(Text({ maxLength: 1024 })) },
      { additionalProperties: true },
    ),
    clientExtensionResults: Type.Object({}, { additionalProperties: true }),
    authenticatorAttachment: Type.Optional(Text({ maxLength: 32 })),
  },
  { additionalProperties: true },
);
const RegisterBody = Type.Object(
  { challenge_id: Uuid, name: Type.Optional(Text({ minLength: 1, maxLength: 100 })), response: AttestationJson },
  { additionalProperties: false },
);
const StepUpBody = Type.Object({ challenge_id: Uuid, response: AssertionJson }, { additionalProperties: false });
const StepUpResult = Type.Object({ aal: Type.Literal(3), aal_expires_at: Timestamp, credential_id: Uuid }, { additionalProperties: false });
const CredentialList = Type.Object({ items: Type.Array(Credential), has_more: Type.Boolean() }, { additionalProperties: false });

const common = { stability: 'beta' as const, tags: ['identity'], bodyLimit: 64 * 1024 };

/** The calling session as a ceremony subject; API keys are refused (they never reach AAL3). */
async function subjectOf(ctx: RequestContext<unknown, unknown, unknown>): Promise<{ principal: Principal; subject: CeremonySubject }> {
  const principal = ctx.principal;
  if (!principal) throw errors.unauthenticated();
  if (principal.kind !== 'user') throw errors.forbidden('WebAuthn ceremonies need a session (svcs_…); API keys never reach AAL3');
  const user = await identityOf(ctx.services).store.transaction((tx) => findUser(tx, principal.userId));
  if (!user) throw errors.unauthenticated();
  return { principal, subject: { userId: user.id, email: user.email, sessionId: principal.credentialId } };
}

/**
 * A second authenticator may only be added from an AAL3 session: otherwise a stolen password
 * alone could enrol an attacker's key and step up with it. The first one needs only the session.
 */
async function requireEnrolmentRight(ctx: RequestContext<unknown, unknown, unknown>, principal: Principal): Promise<void> {
  const existing = await identityOf(ctx.services).store.transaction((tx) => listCredentials(tx, principal.userId));
  if (existing.length > 0 && currentAal(principal) < 3)
    throw new ApiError('step_up_required', 'adding another authenticator requires a step-up with one already registered');
}

export const webauthnRoutes: AnyRoute[] = [
  route({
    ...common,
    method: 'POST',
    path: `${WEBAUTHN_PREFIX}/webauthn/registration/options`,
    operationId: 'webauthnRegistrationOptions',
    summary: 'Start registering a WebAuthn authenticator for the calling user (options for navigator.credentials.create)',
    permission: 'self:write',
    unaudited: 'an ephemeral challenge; the registration it leads to is recorded',
    response: Options,
    handler: async (ctx) => {
      const { principal, subject } = await subjectOf(ctx);
      await requireEnrolmentRight(ctx, principal);
      return startRegistration(identityOf(ctx.services).store, webauthnSettings(), subject);
    },
  }),
  route({
    ...common,
    method: 'POST',
    path: `${WEBAUTHN_PREFIX}/webauthn/registration`,
    operationId: 'webauthnRegister',
    summary: 'Verify the attestation (user verification required) and store the authenticator',
    permission: 'self:write',
    audit: 'webauthn.register',
    auditChain: 'system',
    body: RegisterBody,
    response: Credential,
    status: 201,
    handler: async (ctx) => {
      const { principal, subject } = await subjectOf(ctx);
      await requireEnrolmentRight(ctx, principal);
      const body = ctx.body;
      const credential = await finishRegistration(
        identityOf(ctx.services).store,
        webauthnSettings(),
        subject,
        body.challenge_id,
        body.response as unknown as RegistrationResponseJSON,
        body.name ?? 'security key',
      );
      await ctx.audit({ kind: 'webauthn_credential', id: credential.id }, { name: credential.name, device_type: credential.deviceType });
      return reply.json(credentialView(credential), 201);
    },
  }),
  route({
    ...common,
    method: 'GET',
    path: `${WEBAUTHN_PREFIX}/webauthn/credentials`,
    operationId: 'webauthnListCredentials',
    summary: "The calling user's registered authenticators",
    permission: 'self:read',
    response: CredentialList,
    handler: async (ctx) => {
      const { subject } = await subjectOf(ctx);
      const items = await identityOf(ctx.services).store.transaction((tx) => listCredentials(tx, subject.userId));
      return { items: items.map(credentialView), has_more: false };
    },
  }),
  route({
    ...common,
    method: 'DELETE',
    path: `${WEBAUTHN_PREFIX}/webauthn/credentials/{id}`,
    operationId: 'webauthnDeleteCredential',
    summary: 'Remove one of the calling user’s authenticators (AAL3)',
    permission: 'self:write',
    audit: 'webauthn.delete',
    auditChain: 'system',
    params: Type.Object({ id: Uuid }),
    status: 204,
    handler: async (ctx) => {
      const { principal, subject } = await subjectOf(ctx);
      if (currentAal(principal) < 3) throw new ApiError('step_up_required');
      const gone = await identityOf(ctx.services).store.transaction((tx) => deleteCredential(tx, subject.userId, ctx.params.id));
      if (!gone) throw errors.notFound('credential');
      await ctx.audit({ kind: 'webauthn_credential', id: ctx.params.id });
      return reply.empty(204);
    },
  }),
  route({
    ...common,
    method: 'POST',
    path: `${WEBAUTHN_PREFIX}/step-up/options`,
    operationId: 'stepUpOptions',
    summary: 'Start a step-up: assertion options over the calling user’s authenticators (navigator.credentials.get)',
    permission: 'self:write',
    unaudited: 'an ephemeral challenge; the step-up it leads to is recorded, success or failure',
    response: Options,
    handler: async (ctx) => {
      const { subject } = await subjectOf(ctx);
      return startStepUp(identityOf(ctx.services).store, webauthnSettings(), subject);
    },
  }),
  route({
    ...common,
    method: 'POST',
    path: `${WEBAUTHN_PREFIX}/step-up`,
    operationId: 'stepUp',
    summary: 'Verify the assertion (user verification required); the calling session becomes AAL3 for 15 minutes',
    permission: 'self:write',
    audit: ['auth.step_up', 'auth.step_up.failed'],
    auditChain: 'system',
    body: StepUpBody,
    response: StepUpResult,
    handler: async (ctx) => {
      const { principal, subject } = await subjectOf(ctx);
      const runtime = identityOf(ctx.services);
      let credentialId: string;
      try {
        credentialId = (
          await finishStepUp(
            runtime.store,
            webauthnSettings(),
            subject,
            ctx.body.challenge_id,
            ctx.body.response as unknown as AuthenticationResponseJSON,
          )
        ).id;
      } catch (err) {
        if (err instanceof ApiError) {
          await ctx.audit({ kind: 'session', id: principal.credentialId }, { reason: err.code }, { action: 'auth.step_up.failed' });
        }
        throw err;
      }
      const until = timestampFromDate(new Date(Date.now() + AAL3_TTL_MS));
      const raised = await stepUpSession(runtime.store, principal.credentialId, until, {
        method: 'hwk',
        invalidate: () => runtime.invalidate(),
      });
      if (!raised) throw new ApiError('unauthenticated', 'invalid or expired credential');
      await ctx.audit({ kind: 'session', id: principal.credentialId }, { credential_id: credentialId, aal: 3, aal_expires_at: until });
      return { aal: 3 as const, aal_expires_at: until, credential_id: credentialId };
    },
  }),
];
