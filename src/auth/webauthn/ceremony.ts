/**
 * The two WebAuthn ceremonies of the AAL3 step-up (W3C WebAuthn Level 3 §7.1 registration,
 * §7.2 authentication) over SimpleWebAuthn: options with a single-use challenge bound to the
 * calling session, then verification with user verification required (NIST SP 800-63B §4.3:
 * AAL3 needs a multi-factor cryptographic authenticator, so UV is never optional here).
 */
import {
  generateAuthenticationOptions,
  generateRegistrationOptions,
  verifyAuthenticationResponse,
  verifyRegistrationResponse,
  type AuthenticationResponseJSON,
  type AuthenticatorTransport,
  type PublicKeyCredentialCreationOptionsJSON,
  type PublicKeyCredentialRequestOptionsJSON,
  type RegistrationResponseJSON,
} from '@simplewebauthn/server';
import { ApiError, errors } from '../../contract/errors.js';
import { nowTimestamp, timestampFromDate } from '../../ledger/time.js';
import { uuid7 } from '../../ledger/uuid7.js';
import type { Store } from '../../store/store-types.js';
import {
  consumeChallenge,
  credentialIdTaken,
  findCredential,
  insertCredential,
  listCredentials,
  recordUse,
  saveChallenge,
  type StoredCredential,
} from './credential-store.js';
import { originAllowed, type WebauthnSettings } from './settings.js';

/** How long a ceremony may take between options and verification. */
export const CHALLENGE_TTL_MS = 5 * 60_000;

/** Who runs a ceremony: a user on one session (API keys never do, DECISIONS.md "Assurance"). */
export interface CeremonySubject {
  userId: string;
  email: string;
  sessionId: string;
}

/** Options handed to `navigator.credentials.create/get` plus the id to echo back on verify. */
export interface CeremonyStart<O> {
  challenge_id: string;
  public_key: O;
}

/** Start registering an authenticator for the subject; existing ones are excluded (§5.4.3 excludeCredentials). */
export async function startRegistration(
  store: Store,
  settings: WebauthnSettings,
  subject: CeremonySubject,
): Promise<CeremonyStart<PublicKeyCredentialCreationOptionsJSON>> {
  const existing = await store.transaction((tx) => listCredentials(tx, subject.userId));
  const options = await generateRegistrationOptions({
    rpName: settings.rpName,
    rpID: settings.rpId,
    userName: subject.email,
    userDisplayName: subject.email,
    // §5.4.3: the user handle is opaque and must not carry personal data; the user id is.
    userID: new TextEncoder().encode(subject.userId),
    attestationType: 'none',
    excludeCredentials: existing.map((c) => ({ id: c.credentialId, transports: c.transports as AuthenticatorTransport[] })),
    authenticatorSelection: { residentKey: 'preferred', userVerification: 'required' },
    timeout: CHALLENGE_TTL_MS,
  });
  const challengeId = await remember(store, subject, 'register', options.challenge);
  return { challenge_id: challengeId, public_key: options };
}

/** Verify an attestation and store the credential; 403 when it does not verify, 409 when the credential is known. */
export async function finishRegistration(
  store: Store,
  settings: WebauthnSettings,
  subject: CeremonySubject,
  challengeId: string,
  response: RegistrationResponseJSON,
  name: string,
): Promise<StoredCredential> {
  const challenge = await take(store, subject, challengeId, 'register');
  const origin = ceremonyOrigin(response.response.clientDataJSON, settings);
  let verified;
  try {
    verified = await verifyRegistrationResponse({
      response,
      expectedChallenge: challenge,
      expectedOrigin: origin,
      expectedRPID: settings.rpId,
      requireUserVerification: true,
    });
  } catch (err) {
    throw errors.forbidden(`WebAuthn registration rejected: ${(err as Error).message}`);
  }
  if (!verified.verified) throw errors.forbidden('WebAuthn registration rejected');
  const info = verified.registrationInfo;
  const now = nowTimestamp();
  const credential: StoredCredential = {
    id: uuid7(),
    userId: subject.userId,
    credentialId: info.credential.id,
    publicKey: info.credential.publicKey,
    signCount: info.credential.counter,
    transports: (info.credential.transports ?? response.response.transports ?? []).filter((t) => /^[a-z-]{1,20}$/.test(t)),
    name,
    deviceType: info.credentialDeviceType,
    backedUp: info.credentialBackedUp,
    createdAt: now,
    lastUsedAt: null,
  };
  await store.transaction(async (tx) => {
    if (await credentialIdTaken(tx, credential.credentialId)) throw errors.conflict('this authenticator credential is already registered');
    await insertCredential(tx, credential);
  });
  return credential;
}

/** Start a step-up: an assertion request over the subject's credentials; 409 when none is registered. */
export async function startStepUp(
  store: Store,
  settings: WebauthnSettings,
  subject: CeremonySubject,
): Promise<CeremonyStart<PublicKeyCredentialRequestOptionsJSON>> {
  const creds = await store.transaction((tx) => listCredentials(tx, subject.userId));
  if (creds.length === 0) throw errors.conflict('no WebAuthn credential is registered for this user; register one first');
  const options = await generateAuthenticationOptions({
    rpID: settings.rpId,
    allowCredentials: creds.map((c) => ({ id: c.credentialId, transports: c.transports as AuthenticatorTransport[] })),
    userVerification: 'required',
    timeout: CHALLENGE_TTL_MS,
  });
  const challengeId = await remember(store, subject, 'step_up', options.challenge);
  return { challenge_id: challengeId, public_key: options };
}

/** Verify an assertion with user verification; returns the credential used. 403 on any failure. */
export async function finishStepUp(
  store: Store,
  settings: WebauthnSettings,
  subject: CeremonySubject,
  challengeId: string,
  response: AuthenticationResponseJSON,
): Promise<StoredCredential> {
  const challenge = await take(store, subject, challengeId, 'step_up');
  const origin = ceremonyOrigin(response.response.clientDataJSON, settings);
  const credential = await store.transaction((tx) => findCredential(tx, subject.userId, response.id));
  if (!credential) throw errors.forbidden('WebAuthn assertion rejected: unknown credential');
  let result;
  try {
    result = await verifyAuthenticationResponse({
      response,
      expectedChallenge: challenge,
      expectedOrigin: origin,
      expectedRPID: settings.rpId,
      credential: {
        id: credential.credentialId,
        publicKey: new Uint8Array(credential.publicKey),
        counter: credential.signCount,
        transports: credential.transports as AuthenticatorTransport[],
      },
      requireUserVerification: true,
    });
  } catch (err) {
    // Includes a signature counter that went backwards (§6.1.1: a possibly cloned authenticator).
    throw errors.forbidden(`WebAuthn assertion rejected: ${(err as Error).message}`);
  }
  if (!result.verified || !result.authenticationInfo.userVerified)
    throw errors.forbidden('WebAuthn assertion rejected: user verification required');
  const now = nowTimestamp();
  await store.transaction((tx) => recordUse(tx, credential.id, result.authenticationInfo.newCounter, now));
  return { ...credential, signCount: result.authenticationInfo.newCounter, lastUsedAt: now };
}

async function remember(store: Store, subject: CeremonySubject, purpose: 'register' | 'step_up', challenge: string): Promise<string> {
  const id = uuid7();
  const expiresAt = timestampFromDate(new Date(Date.now() + CHALLENGE_TTL_MS));
  await store.transaction((tx) =>
    saveChallenge(tx, { id, userId: subject.userId, sessionId: subject.sessionId, purpose, challenge, expiresAt }, nowTimestamp()),
  );
  return id;
}

async function take(store: Store, subject: CeremonySubject, challengeId: string, purpose: 'register' | 'step_up'): Promise<string> {
  const found = await store.transaction((tx) => consumeChallenge(tx, challengeId, subject.sessionId, purpose, nowTimestamp()));
  if (!found || found.userId !== subject.userId) throw errors.badRequest('unknown, used or expired challenge_id; request new options');
  return found.challenge;
}

/** The origin the browser recorded in clientDataJSON (§5.8.1), if the settings accept it. */
function ceremonyOrigin(clientDataJSON: string, settings: WebauthnSettings): string {
  let origin: unknown;
  try {
    origin = (JSON.parse(Buffer.from(clientDataJSON, 'base64url').toString('utf8')) as { origin?: unknown }).origin;
  } catch {
    throw errors.badRequest('clientDataJSON is not base64url-encoded JSON');
  }
  if (typeof origin !== 'string' || !originAllowed(origin, settings)) {
    throw new ApiError(
      'forbidden',
      `WebAuthn ceremony ran on an origin this server does not accept: ${JSON.stringify(String(origin)).slice(0, 200)}`,
    );
  }
  return origin;
}
