/**
 * Raw Ed25519 rates, the ceilings the ledger benches compare against: one library call per
 * operation in a tight loop on N worker threads, no hashing, no I/O, no pool. Both engines are
 * measured in the same run: node:crypto (OpenSSL; the baseline issue 4 names) and libsodium
 * (sodium-native; what the ledger uses by default, src/ledger/ed25519-engine.ts).
 */
import { Worker } from 'node:worker_threads';

export type RawEngine = 'node-crypto' | 'libsodium';
export type RawOp = 'sign' | 'verify';

const WORKER = new URL('./raw-ed25519-worker.js', import.meta.url);

/** Operations per second of `op` on `engine` with `threads` threads busy for `seconds`. */
export async function rawEd25519Rate(engine: RawEngine, op: RawOp, threads: number, seconds: number): Promise<number> {
  const started = performance.now();
  const counts = await Promise.all(
    Array.from({ length: threads }, () =>
      new Promise<number>((resolve, reject) => {
        const w = new Worker(WORKER, { workerData: { engine, op, seconds } });
        w.once('message', (n: number) => {
          resolve(n);
          void w.terminate();
        });
        w.once('error', reject);
      }),
    ),
  );
  return counts.reduce((a, b) => a + b, 0) / ((performance.now() - started) / 1000);
}
