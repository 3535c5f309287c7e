/**
 * Pushes spooled batches to the core's `Ingest/Push` stream (ingest.proto) and deletes each from
 * the spool only when the core acked it. At most `window` batches are unacked on the wire; when
 * the stream fails (core restarting, network) everything unacked is simply sent again on the next
 * stream, after a jittered exponential backoff; the core's batch-id idempotency makes re-sends
 * harmless.
 */
import { Metadata, credentials, type ChannelCredentials, type ClientDuplexStream, type ServiceError } from '@grpc/grpc-js';
import type { Logger } from 'pino';
import { serviceClient } from '../grpc/proto.js';
import { Backoff } from './backoff.js';
import { toBatchLists } from './items.js';
import type { Spool, SpoolBatch } from './spool.js';

/** TLS material of the collector's connection; null is plaintext (only with --insecure). */
export interface PushTls {
  /** PEM of the CA that signed the core's certificate (default: the system trust store) */
  caPem?: string;
  /** PEM client certificate and key for mutual TLS */
  certPem?: string;
  keyPem?: string;
  /** name to verify the core's certificate against, instead of the host in coreAddr */
  serverName?: string;
}

export interface PusherOptions {
  coreAddr: string;
  tls: PushTls | null;
  token: string;
  /** the collector's name, sent with each batch and recorded in the ledger */
  name: string;
  /** the tenant it means to write to (x-service-tenant); absent: the token's */
  tenant?: string;
  spool: Spool;
  log: Logger;
  /** unacked batches on the wire at once (default 8) */
  window?: number;
  backoff?: { baseMs: number; capMs: number };
}

interface Ack {
  batch_id: string;
  status: 'ACCEPTED' | 'DUPLICATE' | 'REJECTED';
  accepted: number;
  rejected: Array<{ kind: string; index: number; reason: string }>;
  ledger_seq: number;
  error: string;
}

/** Statistics for logs and tests. */
export interface PushStats {
  acked: number;
  duplicates: number;
  rejectedBatches: number;
  rejectedItems: number;
  reconnects: number;
}

/** The push loop of one collector. */
export class Pusher {
  readonly stats: PushStats = { acked: 0, duplicates: 0, rejectedBatches: 0, rejectedItems: 0, reconnects: 0 };
  private readonly client: InstanceType<ReturnType<typeof serviceClient>>;
  private readonly backoff: Backoff;
  private readonly window: number;
  private stream: ClientDuplexStream<unknown, Ack> | undefined;
  private readonly inflight = new Set<string>();
  private stopped = false;
  private wake: (() => void) | undefined;
  private loop: Promise<void> | undefined;
  private idleWaiters: Array<() => void> = [];

  constructor(private readonly opts: PusherOptions) {
    const Client = serviceClient('Ingest');
    const channelOptions: Record<string, string | number> = { 'grpc.max_send_message_length': 4 * 1024 * 1024 };
    let creds: ChannelCredentials;
    if (opts.tls === null) creds = credentials.createInsecure();
    else {
      const t = opts.tls;
      creds = credentials.createSsl(
        t.caPem ? Buffer.from(t.caPem) : null,
        t.keyPem ? Buffer.from(t.keyPem) : null,
        t.certPem ? Buffer.from(t.certPem) : null,
      );
      if (t.serverName) {
        channelOptions['grpc.ssl_target_name_override'] = t.serverName;
        channelOptions['grpc.default_authority'] = t.serverName;
      }
    }
    this.client = new Client(opts.coreAddr, creds, channelOptions);
    this.backoff = new Backoff(opts.backoff ?? { baseMs: 200, capMs: 15_000 });
    this.window = opts.window ?? 8;
  }

  /** Start the loop (idempotent). */
  start(): void {
    this.loop ??= this.run();
  }

  /** New batches were spooled. */
  notify(): void {
    this.fill();
    this.wake?.();
  }

  /** Resolves once the spool is empty (everything acked) or `timeoutMs` passed; true when empty. */
  async drained(timeoutMs: number): Promise<boolean> {
    if (this.opts.spool.size === 0) return true;
    let timer: NodeJS.Timeout | undefined;
    const empty = new Promise<boolean>((resolve) => this.idleWaiters.push(() => resolve(true)));
    const late = new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(this.opts.spool.size === 0), timeoutMs)));
    const r = await Promise.race([empty, late]);
    clearTimeout(timer);
    return r;
  }

  /** Stop: end the stream, stop reconnecting. */
  async stop(): Promise<void> {
    this.stopped = true;
    this.stream?.end();
    this.stream?.cancel();
    this.wake?.();
    await this.loop;
    this.client.close();
  }

  private async run(): Promise<void> {
    while (!this.stopped) {
      const outcome = await this.session();
      if (this.stopped) break;
      this.stats.reconnects++;
      const delay = this.backoff.next();
      this.opts.log.warn(
        { core: this.opts.coreAddr, code: outcome?.code, error: outcome?.details, retry_in_ms: delay, unacked: this.opts.spool.size },
        'ingest stream ended; reconnecting',
      );
      await new Promise<void>((resolve) => {
        const t = setTimeout(resolve, delay);
        this.wake = () => {
          if (this.stopped) {
            clearTimeout(t);
            resolve();
          }
        };
      });
    }
  }

  /** One stream: send, collect acks, until it fails. Resolves with its error, if any. */
  private session(): Promise<ServiceError | undefined> {
    return new Promise((resolve) => {
      const md = new Metadata();
      md.set('authorization', `Bearer ${this.opts.token}`);
      if (this.opts.tenant) md.set('x-service-tenant', this.opts.tenant);
      const stream = (this.client as unknown as { Push(md: Metadata): ClientDuplexStream<unknown, Ack> }).Push(md);
      this.stream = stream;
      this.inflight.clear();
      let done = false;
      const finish = (err?: ServiceError) => {
        if (done) return;
        done = true;
        this.stream = undefined;
        this.inflight.clear();
        resolve(err);
      };
      stream.on('data', (ack: Ack) => this.onAck(ack));
      stream.on('error', (err: ServiceError) => finish(err));
      stream.on('end', () => finish());
      stream.on('status', () => undefined);
      this.fill();
    });
  }

  private onAck(ack: Ack): void {
    if (!this.inflight.delete(ack.batch_id)) return;
    this.backoff.reset();
    if (ack.status === 'REJECTED') {
      // Re-sending it unchanged cannot help: drop it and say so loudly.
      this.stats.rejectedBatches++;
      this.opts.log.error({ batch_id: ack.batch_id, error: ack.error }, 'core rejected a batch; dropped from the spool');
    } else {
      this.stats.acked++;
      if (ack.status === 'DUPLICATE') this.stats.duplicates++;
      if (ack.rejected.length > 0) {
        this.stats.rejectedItems += ack.rejected.length;
        this.opts.log.warn(
          { batch_id: ack.batch_id, rejected: ack.rejected.slice(0, 20), count: ack.rejected.length },
          'core rejected items of a batch',
        );
      }
    }
    this.opts.spool.ack(ack.batch_id);
    if (this.opts.spool.size === 0) for (const w of this.idleWaiters.splice(0)) w();
    this.fill();
  }

  /** Send unacked batches not yet on this stream, up to the window. */
  private fill(): void {
    const stream = this.stream;
    if (!stream) return;
    if (this.inflight.size >= this.window) return;
    for (const b of this.opts.spool.pending()) {
      if (this.inflight.size >= this.window) break;
      if (this.inflight.has(b.id)) continue;
      this.inflight.add(b.id);
      stream.write(this.message(b));
    }
  }

  private message(b: SpoolBatch): Record<string, unknown> {
    return { batch_id: b.id, collector: this.opts.name, ...toBatchLists(b.items) };
  }
}
