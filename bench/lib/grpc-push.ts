/**
 * A counted gRPC `Ingest/Push` load: `clients` collector-equivalent streams share a list of batches,
 * each stream keeping `window` batches in flight and sending its next one when one is acknowledged
 * (closed loop). Every ack is durable (store + ledger); the answer is the accepted items and the
 * wall time from the first write to the last ack.
 */
import { randomUUID } from 'node:crypto';
import { Metadata, credentials, type ClientDuplexStream } from '@grpc/grpc-js';
import { serviceClient } from '../../src/grpc/proto.js';

/** The items of one batch (the wire names of `Batch`). */
export interface PushItems {
  edges?: unknown[];
  findings?: unknown[];
}

export interface PushResult {
  accepted: number;
  seconds: number;
  batches: number;
}

type Ack = { batch_id: string; accepted: number; status: string; error?: string };

export async function pushBatches(
  addr: string,
  ca: Buffer | string,
  token: string,
  batches: readonly PushItems[],
  opts: { clients: number; window: number },
): Promise<PushResult> {
  let next = 0;
  let accepted = 0;
  const t0 = performance.now();
  const Client = serviceClient('Ingest');
  const one = async (n: number): Promise<void> => {
    const client = new Client(addr, credentials.createSsl(Buffer.from(ca)), { 'grpc.use_local_subchannel_pool': 1 });
    const md = new Metadata();
    md.set('authorization', `Bearer ${token}`);
    const stream = (client as unknown as { Push(md: Metadata): ClientDuplexStream<unknown, Ack> }).Push(md);
    let inFlight = 0;
    const send = (): boolean => {
      if (next >= batches.length) return false;
      const b = batches[next++] as PushItems;
      inFlight++;
      stream.write({ batch_id: randomUUID(), collector: `bench-${n}`, edges: b.edges ?? [], findings: b.findings ?? [] });
      return true;
    };
    try {
      await new Promise<void>((resolve, reject) => {
        stream.on('data', (ack: Ack) => {
          inFlight--;
          if (ack.status === 'REJECTED') return reject(new Error(`batch ${ack.batch_id} rejected: ${ack.error ?? ''}`));
          accepted += ack.accepted;
          if (!send() && inFlight === 0) stream.end();
        });
        stream.on('error', reject);
        stream.on('end', resolve);
        let started = 0;
        for (let i = 0; i < opts.window; i++) if (send()) started++;
        if (started === 0) stream.end();
      });
    } finally {
      client.close();
    }
  };
  await Promise.all(Array.from({ length: opts.clients }, (_, n) => one(n)));
  return { accepted, seconds: (performance.now() - t0) / 1000, batches: batches.length };
}
