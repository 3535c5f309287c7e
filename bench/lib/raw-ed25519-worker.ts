/** Thread body of raw-ed25519.ts: one engine, one operation, a fixed 94-byte message (an event preimage's size). */
import { generateKeyPairSync, sign, verify } from 'node:crypto';
import { createRequire } from 'node:module';
import { parentPort, workerData } from 'node:worker_threads';
import type { RawEngine, RawOp } from './raw-ed25519.js';

interface SodiumApi {
  sodium_malloc(n: number): Buffer;
  crypto_sign_keypair(pk: Buffer, sk: Buffer): void;
  crypto_sign_detached(sig: Buffer, m: Buffer, sk: Buffer): void;
  crypto_sign_verify_detached(sig: Buffer, m: Buffer, pk: Buffer): boolean;
}

const { engine, op, seconds } = workerData as { engine: RawEngine; op: RawOp; seconds: number };
const msg = Buffer.alloc(94, 1);
let once: () => unknown;
if (engine === 'node-crypto') {
  const { privateKey, publicKey } = generateKeyPairSync('ed25519');
  const sig = sign(null, msg, privateKey);
  once = op === 'sign' ? () => sign(null, msg, privateKey) : () => verify(null, msg, publicKey, sig);
} else {
  const sodium = createRequire(import.meta.url)('sodium-native') as SodiumApi;
  const pk = Buffer.alloc(32);
  const sk = sodium.sodium_malloc(64);
  sodium.crypto_sign_keypair(pk, sk);
  const sig = Buffer.alloc(64);
  sodium.crypto_sign_detached(sig, msg, sk);
  const out = Buffer.alloc(64);
  once = op === 'sign' ? () => sodium.crypto_sign_detached(out, msg, sk) : () => sodium.crypto_sign_verify_detached(sig, msg, pk);
}
for (let i = 0; i < 500; i++) once();
const end = Date.now() + seconds * 1000;
let n = 0;
while (Date.now() < end) {
  for (let i = 0; i < 256; i++) once();
  n += 256;
}
parentPort?.postMessage(n);
