/**
 * When findings are brought up to date: collector items are folded before each findings read (a
 * cheap indexed look past the tenant's mark) and by the background sweep; the detectors run on
 * demand (`POST …/findings/evaluate`), shortly after the access graph changes (`edge.observed`, and
 * agent changes, on the bus), and on a periodic sweep of every active tenant
 * (`SERVICE_FINDINGS_EVALUATE_INTERVAL_S`, default 300; 0 turns the sweep off). Runs of one tenant
 * are serialised in this process; every run that changed something appends one ledger record; its
 * events are written to the event log in its transaction and announced after the commit.
 */
import type { Logger } from 'pino';
import type { Services } from '../../serve/services.js';
import { syncCollectorFindings } from './collector-sync.js';
import { DEFAULT_DETECTOR_BOUNDS, evaluateDetectors, Pacer } from './detectors.js';
import { auditSystem, findingEvents } from './events.js';

const running = new Map<string, Promise<unknown>>();

/** Runs `fn` after any run of the same tenant in this process has finished. */
async function serialised<T>(tenant: string, fn: () => Promise<T>): Promise<T> {
  const prev = running.get(tenant) ?? Promise.resolve();
  const next = prev.catch(() => undefined).then(fn);
  running.set(tenant, next);
  try {
    return await next;
  } finally {
    if (running.get(tenant) === next) running.delete(tenant);
  }
}

/** Folds new collector items; never fails the caller (a read must not break on a busy fold). */
export async function catchUpCollector(
  services: Pick<Services, 'store' | 'audit' | 'events'>,
  tenant: string,
  log?: Pick<Logger, 'warn'>,
): Promise<number> {
  try {
    return await serialised(tenant, async () => {
      const out = await services.events.withEvents((emit) =>
        syncCollectorFindings(services.store, tenant, Date.now(), (tx, o) => emit(findingEvents(tenant, o.reported), tx)),
      );
      if (out.items === 0) return 0;
      await auditSystem(services, tenant, 'security.findings.collect', {
        items: out.items,
        reported: out.reported.length,
        repeated: out.repeated,
      });
      return out.items;
    });
  } catch (err) {
    log?.warn({ err, tenant }, 'collector findings not folded this time');
    return 0;
  }
}

/**
 * A background run (graph change, sweep) pauses nine times as long as each step took (at most a
 * second): it takes about a tenth of the main thread. A requested run goes at full speed.
 */
export const BACKGROUND_PACE = 9;

/** Who asked for an evaluation: a request, recording through its `ctx.audit`, or the system on its own. */
export type Requester = { audit: (meta: Record<string, unknown>) => Promise<unknown> } | 'system';

/** Folds collector items and runs the detectors on one tenant; audited and announced. */
export async function evaluateTenant(
  services: Pick<Services, 'store' | 'audit' | 'events'>,
  tenant: string,
  who: Requester,
  log?: Pick<Logger, 'warn'>,
  pacer: Pacer = new Pacer(0),
) {
  const items = await catchUpCollector(services, tenant, log);
  return serialised(tenant, async () => {
    const out = await services.events.withEvents((emit) =>
      evaluateDetectors(
        services.store,
        tenant,
        DEFAULT_DETECTOR_BOUNDS,
        (tx, o) =>
          emit(
            findingEvents(
              tenant,
              o.reported,
              o.resolved.map((f) => ({ finding: f, previous: 'open' })),
            ),
            tx,
          ),
        pacer,
      ),
    );
    const meta = {
      reported: out.reported.length,
      resolved: out.resolved.length,
      repeated: out.repeated,
      drift: out.drift,
      escalation: out.escalation,
    };
    // A request's evaluation is always recorded (it is a mutation route); a background run only when it changed something.
    if (who !== 'system') await who.audit(meta);
    else if (out.reported.length + out.resolved.length > 0) await auditSystem(services, tenant, 'security.findings.evaluate', meta);
    return {
      collector: { items },
      reported: out.reported.length,
      resolved: out.resolved.length,
      repeated: out.repeated,
      drift: out.drift,
      escalation: out.escalation,
    };
  });
}

/** The evaluation interval from the environment, in ms (0: no sweep). */
export function evaluateIntervalMs(env: NodeJS.ProcessEnv = process.env): number {
  const raw = env['SERVICE_FINDINGS_EVALUATE_INTERVAL_S'];
  const n = raw === undefined ? 300 : Number(raw);
  return Number.isFinite(n) && n >= 0 ? Math.round(n * 1000) : 300_000;
}

/** How long after a graph change the detectors run at the soonest (changes inside the window share one run). */
const DEBOUNCE_MS = 1_000;

/**
 * Graph-triggered runs of a tenant are spaced: after a run that worked T ms (its pauses not
 * counted) the next one starts no sooner than DUTY_SPACING × T after it ended. A tenant under sustained
 * ingest with a large drift set is then evaluated less often, not back to back.
 */
export const DUTY_SPACING = 5;

/** When a graph change should trigger the next run, from the last run's start and end (ms). */
export function nextRunDelay(now: number, last: { started: number; ended: number } | undefined): number {
  if (!last) return DEBOUNCE_MS;
  const spacedUntil = last.ended + DUTY_SPACING * Math.max(0, last.ended - last.started);
  return Math.max(DEBOUNCE_MS, spacedUntil - now);
}

/** Starts the bus subscription and the sweep; returns the function that stops them. */
export function startSecurity(services: Services): () => Promise<void> {
  const log = services.log.child({ log: 'security' });
  const pending = new Map<string, NodeJS.Timeout>();
  const lastRun = new Map<string, { started: number; ended: number }>();
  // Tenants with a run in progress, and whether the graph changed meanwhile (a run follows, spaced).
  const inRun = new Map<string, boolean>();
  const stopping = new AbortController();
  let stopped = false;
  const schedule = (tenant: string): void => {
    if (stopped || pending.has(tenant)) return;
    if (inRun.has(tenant)) return void inRun.set(tenant, true);
    pending.set(tenant, setTimeout(() => run(tenant), nextRunDelay(performance.now(), lastRun.get(tenant))).unref());
  };
  const evaluate = async (tenant: string): Promise<void> => {
    const started = performance.now();
    const pacer = new Pacer(BACKGROUND_PACE, stopping.signal);
    inRun.set(tenant, false);
    try {
      await evaluateTenant(services, tenant, 'system', log, pacer);
    } catch (err) {
      if (stopping.signal.aborted) return;
      log.warn({ err, tenant }, 'findings ' + 'evaluation failed');
    } finally {
      // The spacing counts the run's work, not its pauses.
      const ended = performance.now();
      lastRun.set(tenant, { started: started + pacer.pausedMs, ended });
      log.debug({ tenant, ms: Math.round(ended - started) }, 'findings evaluated');
      const changedMeanwhile = inRun.get(tenant) === true;
      inRun.delete(tenant);
      if (changedMeanwhile) schedule(tenant);
    }
  };
  const run = (tenant: string): void => {
    pending.delete(tenant);
    if (stopped) return;
    void evaluate(tenant);
  };
  const unsubscribe = services.events.subscribe(
    { name: 'security-detectors', types: ['edge.observed', 'agent.created', 'agent.deleted'] },
    (e) => {
      schedule(e.tenant);
    },
  );
  const every = evaluateIntervalMs();
  const sweep = async (): Promise<void> => {
    const tenants = await services.store.transaction((tx) =>
      tx.selectFrom('tenants').select('id').where('status', '=', 'active').where('deleted_at', 'is', null).execute(),
    );
    for (const t of tenants) {
      if (stopped) return;
      await evaluate(t.id);
    }
  };
  const timer =
    every > 0
      ? setInterval(() => void sweep().catch((err: unknown) => log.warn({ err }, 'findings ' + 'sweep failed')), every).unref()
      : undefined;
  return async () => {
    stopped = true;
    stopping.abort(new Error('the server is stopping'));
    unsubscribe();
    if (timer) clearInterval(timer);
    for (const t of pending.values()) clearTimeout(t);
    await Promise.allSettled([...running.values()]);
  };
}
