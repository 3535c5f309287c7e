/**
 * The policy-signing key: an Ed25519 key of its own (not the audit key), minted in the data directory
 * on first use like the audit keys (`policy-keys/policy-signing.pem`, 0600 in a 0700 directory) or
 * read from `SERVICE_POLICY_KEY_FILE`. A revision's artifact is the policy document's UTF-8 bytes;
 * its signature is plain Ed25519 over those bytes, so `openssl pkeyutl -verify -rawin` checks it
 * offline with the published public key. The fingerprint is the hex SHA-256 of the key's SPKI DER.
 */
import { createHash, createPrivateKey, createPublicKey, generateKeyPairSync, sign, verify, type KeyObject } from 'node:crypto';
import { constants as fsc } from 'node:fs';
import { mkdir, open, readFile, rename } from 'node:fs/promises';
import { join } from 'node:path';

export interface PolicySigner {
  fingerprint: string;
  publicKeyPem: string;
  sign(artifact: Buffer): string;
  verify(artifact: Buffer, signatureB64: string): boolean;
}

const signers = new Map<string, Promise<PolicySigner>>();

/** The signer of a data directory (one per process; concurrent first calls mint one key). */
export function policySigner(dataDir: string, env: NodeJS.ProcessEnv = process.env): Promise<PolicySigner> {
  const file = env['SERVICE_POLICY_KEY_FILE'] || join(dataDir, 'policy-keys', 'policy-signing.pem');
  let s = signers.get(file);
  if (!s) {
    s = load(file);
    signers.set(file, s);
    s.catch(() => signers.delete(file));
  }
  return s;
}

async function load(file: string): Promise<PolicySigner> {
  let pem: string;
  try {
    pem = await readFile(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    pem = generateKeyPairSync('ed25519').privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
    await mkdir(join(file, '..'), { recursive: true, mode: 0o700 });
    const tmp = `${file}.${process.pid}.tmp`;
    const fh = await open(tmp, fsc.O_WRONLY | fsc.O_CREAT | fsc.O_EXCL, 0o600);
    try {
      await fh.writeFile(pem);
      await fh.sync();
    } finally {
      await fh.close();
    }
    await rename(tmp, file);
  }
  return fromPrivateKey(createPrivateKey(pem));
}

function fromPrivateKey(key: KeyObject): PolicySigner {
  const pub = createPublicKey(key);
  const der = pub.export({ type: 'spki', format: 'der' });
  return {
    fingerprint: createHash('sha256').update(der).digest('hex'),
    publicKeyPem: pub.export({ type: 'spki', format: 'pem' }).toString(),
    sign: (artifact) => sign(null, artifact, key).toString('base64'),
    verify: (artifact, sig) => verify(null, artifact, pub, Buffer.from(sig, 'base64')),
  };
}

/** hex SHA-256 of an artifact. */
export function sha256Hex(bytes: Buffer | string): string {
  return createHash('sha256').update(bytes).digest('hex');
}
