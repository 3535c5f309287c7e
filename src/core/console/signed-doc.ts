/**
 * Offline-signed documents (the license file, the release manifest): `{"<field>": {…}, "signature":
 * "<base64 Ed25519 over the RFC 8785 canonical JSON of the field>"}`. Verified against a public key
 * compiled in or configured (a PEM file path, inline PEM, or base64 of the raw 32 bytes).
 */
import { createHash, createPublicKey, verify, type KeyObject } from 'node:crypto';
import { readFileSync } from 'node:fs';
import canonicalize from 'canonicalize';

export class SignedDocError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'SignedDocError';
  }
}

export interface PublicKeyInfo {
  key: KeyObject;
  pem: string;
  /** hex SHA-256 of the SPKI DER */
  fingerprint: string;
  /** where the key came from, for key custody */
  source: string;
}

const ED25519_SPKI_PREFIX = Buffer.from('302a300506032b6570032100', 'hex');

/** Parse a configured key: a path to a PEM file, inline PEM, or base64 of the raw 32-byte key. */
export function publicKeyFrom(value: string, source: string): PublicKeyInfo {
  let pem: string;
  let where = source;
  const trimmed = value.trim();
  if (trimmed.startsWith('-----BEGIN')) pem = trimmed;
  else if (trimmed.startsWith('/') || trimmed.startsWith('.')) {
    pem = readFileSync(trimmed, 'utf8');
    where = `${source}: file ${trimmed}`;
  } else {
    const raw = Buffer.from(trimmed, 'base64');
    if (raw.length !== 32) throw new SignedDocError(`${source}: expected a PEM file path, PEM text or base64 of a 32-byte Ed25519 key`);
    pem = createPublicKey({ key: Buffer.concat([ED25519_SPKI_PREFIX, raw]), format: 'der', type: 'spki' })
      .export({ type: 'spki', format: 'pem' })
      .toString();
  }
  const key = createPublicKey(pem);
  if (key.asymmetricKeyType !== 'ed25519') throw new SignedDocError(`${source}: the key must be Ed25519, got ${key.asymmetricKeyType}`);
  const der = key.export({ type: 'spki', format: 'der' });
  return {
    key,
    pem: key.export({ type: 'spki', format: 'pem' }).toString(),
    fingerprint: createHash('sha256').update(der).digest('hex'),
    source: where,
  };
}

/** The payload under `field` when its signature verifies; throws SignedDocError otherwise. */
export function verifySignedDoc<T>(text: string, field: string, pub: PublicKeyInfo): T {
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch {
    throw new SignedDocError('not JSON');
  }
  if (typeof doc !== 'object' || doc === null) throw new SignedDocError('not a JSON object');
  const payload = (doc as Record<string, unknown>)[field];
  const signature = (doc as Record<string, unknown>)['signature'];
  if (typeof payload !== 'object' || payload === null || Array.isArray(payload)) throw new SignedDocError(`no "${field}" object`);
  if (typeof signature !== 'string') throw new SignedDocError('no "signature" string');
  const message = Buffer.from(canonicalize(payload) ?? '', 'utf8');
  const sig = Buffer.from(signature, 'base64');
  if (sig.length !== 64 || !verify(null, message, pub.key, sig))
    throw new SignedDocError(`the signature does not verify with key ${pub.fingerprint.slice(0, 16)} (${pub.source})`);
  return payload as T;
}
