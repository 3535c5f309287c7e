/**
 * The offline license (issue 34 item 5): a JSON file signed with Ed25519 by the vendor, verified
 * against the public key compiled in below or `SERVICE_LICENSE_PUBLIC_KEY`. It records who holds
 * the license, its limits and its expiry, and the console shows them. It gates nothing that keeps
 * evidence: the audit ledger, its verification and every export work the same with no license,
 * an expired one or a bad one (docs/support.md "License").
 */
import { SignedDocError, publicKeyFrom, verifySignedDoc, type PublicKeyInfo } from './signed-doc.js';

/** The vendor's license verification key (its private half is not in this repository). */
const COMPILED_IN = '-----BEGIN PUBLIC KEY-----\nMCowBQYDK2VwAyEAUSJhiBppnp85mBW/jSdldEQBRo7juFScGPj3ruESFDY=\n-----END PUBLIC KEY-----\n';

export interface License {
  license_id: string;
  holder: string;
  limits: Record<string, number>;
  issued_at: string;
  expires_at: string;
}

export function licensePublicKey(env: NodeJS.ProcessEnv = process.env): PublicKeyInfo {
  const configured = env['SERVICE_LICENSE_PUBLIC_KEY'];
  return configured ? publicKeyFrom(configured, 'SERVICE_LICENSE_PUBLIC_KEY') : publicKeyFrom(COMPILED_IN, 'compiled in');
}

/** Verify a license file's text; throws SignedDocError naming what is wrong. */
export function verifyLicense(text: string, env: NodeJS.ProcessEnv = process.env): License {
  const lic = verifySignedDoc<License>(text, 'license', licensePublicKey(env));
  for (const f of ['license_id', 'holder', 'issued_at', 'expires_at'] as const) {
    if (typeof lic[f] !== 'string' || lic[f] === '') throw new SignedDocError(`license.${f} must be a non-empty string`);
  }
  if (Number.isNaN(Date.parse(lic.expires_at))) throw new SignedDocError('license.expires_at is not a date');
  if (typeof lic.limits !== 'object' || lic.limits === null || Object.values(lic.limits).some((v) => typeof v !== 'number'))
    throw new SignedDocError('license.limits must map names to numbers');
  return lic;
}

/** What the license governs, shown with it (and what it never does). */
export const LICENSE_GOVERNS =
  'informational limits shown in the console (users, tenants, agents); never enforced against the audit ledger, its verification or ' +
  'exports';

export function licenseStatus(lic: License, now = Date.now()): 'valid' | 'expired' {
  return Date.parse(lic.expires_at) <= now ? 'expired' : 'valid';
}
