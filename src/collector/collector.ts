/**
 * `svc collector`: sources → spool → core (spec "What the service does" item 6). It opens no
 * listener. Each poll reads every source up to a batch, makes the batch durable in the spool
 * (with the source's cursor after it), then lets the pusher send it. SIGTERM drains: sources stop,
 * what they still hold is spooled, and the pusher gets `drainMs` to have the spool acked; whatever
 * is left stays spooled for the next start.
 */
import type { Logger } from 'pino';
import type { CollectorConfig, SourceConfig } from './config.js';
import { DirSource, type DirCursor } from './dir-source.js';
import { parseItem, type Item } from './items.js';
import { Pusher, type PushTls } from './pusher.js';
import { Spool } from './spool.js';
import { JsonlTailer, type TailCursor } from './tailer.js';

export interface CollectorOptions {
  config: CollectorConfig;
  coreAddr: string;
  tls: PushTls | null;
  token: string;
  spoolDir: string;
  log: Logger;
  /** how long SIGTERM waits for acks (default 10 s) */
  drainMs?: number;
  backoff?: { baseMs: number; capMs: number };
}

interface RunningSource {
  config: SourceConfig;
  /** the next chunk: items, the cursor after them, and how many records were unusable */
  read(maxItems: number, maxBytes: number): { items: Item[]; cursor: unknown; invalid: number; consumed: boolean };
  close(): void;
}

/** A running collector. */
export class Collector {
  readonly spool: Spool;
  readonly pusher: Pusher;
  private readonly sources: RunningSource[];
  private timer: NodeJS.Timeout | undefined;
  private polling = false;
  private stopped = false;
  /** records that were not usable items (bad JSON, wrong shape) */
  invalid = 0;

  constructor(private readonly opts: CollectorOptions) {
    this.spool = Spool.open({ dir: opts.spoolDir });
    this.pusher = new Pusher({
      coreAddr: opts.coreAddr,
      tls: opts.tls,
      token: opts.token,
      name: opts.config.name,
      ...(opts.config.tenant ? { tenant: opts.config.tenant } : {}),
      spool: this.spool,
      log: opts.log,
      ...(opts.backoff ? { backoff: opts.backoff } : {}),
    });
    this.sources = opts.config.sources.map((s) => this.openSource(s));
  }

  private openSource(config: SourceConfig): RunningSource {
    const log = this.opts.log;
    if (config.type === 'jsonl') {
      const tailer = new JsonlTailer(config.path, this.spool.cursor(config.name) as TailCursor | undefined);
      return {
        config,
        read: (maxItems, maxBytes) => {
          const r = tailer.read(maxItems, maxBytes);
          const items: Item[] = [];
          let invalid = 0;
          for (const line of r.lines) {
            if (line.trim() === '') continue;
            let parsed: { item?: Item; error?: string };
            try {
              parsed = parseItem(JSON.parse(line));
            } catch (err) {
              parsed = { error: `not JSON: ${(err as Error).message}` };
            }
            if (parsed.item) items.push(parsed.item);
            else {
              invalid++;
              log.warn({ source: config.name, error: parsed.error }, 'skipped an unusable line');
            }
          }
          return { items, cursor: r.cursor, invalid, consumed: r.lines.length > 0 };
        },
        close: () => tailer.close(),
      };
    }
    const dir = new DirSource(config.path, this.spool.cursor(config.name) as DirCursor | undefined, this.opts.config.pollMs);
    return {
      config,
      read: (maxItems) => {
        const before = JSON.stringify(this.spool.cursor(config.name) ?? null);
        const r = dir.read(maxItems);
        const items: Item[] = [];
        let invalid = r.invalid.length;
        for (const f of r.invalid) log.warn({ source: config.name, file: f.file, error: f.reason }, 'skipped an unusable file');
        for (const rec of r.records) {
          const parsed = parseItem(rec);
          if (parsed.item) items.push(parsed.item);
          else invalid++;
        }
        return { items, cursor: r.cursor, invalid, consumed: JSON.stringify(r.cursor) !== before };
      },
      close: () => undefined,
    };
  }

  /** Start polling the sources and pushing. */
  start(): void {
    this.pusher.start();
    this.pusher.notify();
    const tick = () => {
      if (this.stopped) return;
      this.pollOnce();
      this.timer = setTimeout(tick, this.opts.config.pollMs);
    };
    tick();
  }

  /** Read every source until it has nothing more; spool each batch. Returns how many batches were spooled. */
  pollOnce(): number {
    if (this.polling) return 0;
    this.polling = true;
    let spooled = 0;
    try {
      for (const s of this.sources) {
        // Keep the spool bounded by the pusher's pace too: at most 256 unacked batches.
        for (let round = 0; round < 64 && this.spool.size < 256; round++) {
          const r = s.read(this.opts.config.batchMaxItems, this.opts.config.batchMaxBytes);
          this.invalid += r.invalid;
          if (r.items.length > 0) {
            this.spool.append(s.config.name, r.cursor, r.items);
            spooled++;
          } else if (r.consumed) {
            this.spool.advance(s.config.name, r.cursor);
          }
          if (!r.consumed) break;
        }
      }
    } catch (err) {
      this.opts.log.error({ err }, 'reading sources failed');
    } finally {
      this.polling = false;
    }
    if (spooled > 0) this.pusher.notify();
    return spooled;
  }

  /** Drain and stop: true when everything read was acked by the core. */
  async stop(): Promise<boolean> {
    this.stopped = true;
    clearTimeout(this.timer);
    this.pollOnce();
    const empty = await this.pusher.drained(this.opts.drainMs ?? 10_000);
    await this.pusher.stop();
    for (const s of this.sources) s.close();
    this.spool.close();
    this.opts.log.info(
      { drained: empty, unacked: this.spool.size, ...this.pusher.stats },
      empty ? 'collector drained' : 'collector stopped with unacked batches left in the spool',
    );
    return empty;
  }
}
