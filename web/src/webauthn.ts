/** The WebAuthn ceremonies of docs/step-up.md, from the console (same origin, secure context). */
import { api } from './api';

const b64uToBuf = (s: string): ArrayBuffer => {
  const b = atob(s.replace(/-/g, '+').replace(/_/g, '/') + '==='.slice((s.length + 3) % 4));
  return Uint8Array.from(b, (c) => c.charCodeAt(0)).buffer;
};
const bufToB64u = (buf: ArrayBuffer): string =>
  btoa(String.fromCharCode(...new Uint8Array(buf))).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');

type Json = Record<string, any>;
const PKC = PublicKeyCredential as unknown as {
  parseCreationOptionsFromJSON?: (o: Json) => PublicKeyCredentialCreationOptions;
  parseRequestOptionsFromJSON?: (o: Json) => PublicKeyCredentialRequestOptions;
};

function creationOptions(o: Json): PublicKeyCredentialCreationOptions {
  if (PKC.parseCreationOptionsFromJSON) return PKC.parseCreationOptionsFromJSON(o);
  return { ...o, challenge: b64uToBuf(o.challenge), user: { ...o.user, id: b64uToBuf(o.user.id) }, excludeCredentials: (o.excludeCredentials ?? []).map((c: Json) => ({ ...c, id: b64uToBuf(c.id) })) } as PublicKeyCredentialCreationOptions;
}
function requestOptions(o: Json): PublicKeyCredentialRequestOptions {
  if (PKC.parseRequestOptionsFromJSON) return PKC.parseRequestOptionsFromJSON(o);
  return { ...o, challenge: b64uToBuf(o.challenge), allowCredentials: (o.allowCredentials ?? []).map((c: Json) => ({ ...c, id: b64uToBuf(c.id) })) } as PublicKeyCredentialRequestOptions;
}
function toJSON(cred: PublicKeyCredential): Json {
  const withJson = cred as unknown as { toJSON?: () => Json };
  if (typeof withJson.toJSON === 'function') return withJson.toJSON();
  const r = cred.response as AuthenticatorAttestationResponse & AuthenticatorAssertionResponse;
  const response: Json = { clientDataJSON: bufToB64u(r.clientDataJSON) };
  if (r.attestationObject) {
    response.attestationObject = bufToB64u(r.attestationObject);
    response.transports = r.getTransports ? r.getTransports() : [];
  }
  if (r.authenticatorData) {
    response.authenticatorData = bufToB64u(r.authenticatorData);
    response.signature = bufToB64u(r.signature);
    if (r.userHandle) response.userHandle = bufToB64u(r.userHandle);
  }
  return { id: cred.id, rawId: bufToB64u(cred.rawId), type: cred.type, response, clientExtensionResults: cred.getClientExtensionResults() };
}

/** Register a new authenticator for the signed-in user. */
export async function registerAuthenticator(name: string): Promise<unknown> {
  const start = await api<{ challenge_id: string; public_key: Json }>('POST', '/v1/m/identity/webauthn/registration/options', undefined, { noTenant: true });
  const cred = (await navigator.credentials.create({ publicKey: creationOptions(start.public_key) })) as PublicKeyCredential | null;
  if (!cred) throw new Error('the authenticator returned nothing');
  return api('POST', '/v1/m/identity/webauthn/registration', { challenge_id: start.challenge_id, name, response: toJSON(cred) }, { noTenant: true });
}

/** Step the session up to AAL3 (15 minutes). */
export async function stepUp(): Promise<{ aal: number; aal_expires_at: string }> {
  const start = await api<{ challenge_id: string; public_key: Json }>('POST', '/v1/m/identity/step-up/options', undefined, { noTenant: true });
  const cred = (await navigator.credentials.get({ publicKey: requestOptions(start.public_key) })) as PublicKeyCredential | null;
  if (!cred) throw new Error('the authenticator returned nothing');
  return api('POST', '/v1/m/identity/step-up', { challenge_id: start.challenge_id, response: toJSON(cred) }, { noTenant: true });
}
