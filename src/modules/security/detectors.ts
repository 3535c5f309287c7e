/**
 * svc's own detectors: what the access map knows becomes findings with their evidence.
 *
 * - `svc.drift.unexpected`: an access observed without a covering grant (accessmap drift).
 * - `svc.drift.unused`: a grant never observed in a mode that uses it.
 * - `svc.attack-path.escalation`: an agent can come to act as another principal (accessmap
 *   escalation search), with the shortest path as evidence.
 *
 * A run reads the graph only through the access map's exported functions (`listDrift`,
 * `withFoldedGraph` + `escalation`) and core's `listAgents`, never its tables. Each run reports what
 * it sees now and resolves the detector findings it no longer sees, but only where it looked
 * completely: a drift walk stopped at its cap, or an escalation search stopped by its budget, proves
 * no absence, so those findings stay as they are.
 */
import { listAgents } from '../../core/agents/agent-service.js';
import type { Store } from '../../store/store.js';
import { escalation, listDrift, withFoldedGraph, type AttackPath, type DriftItem } from '../accessmap/index.js';
import { resolveAbsent, upsertReportsInTx, type FindingsInTx } from './finding-store.js';
import { naturalKey, type Finding, type FindingReport, type FindingSeverity } from './model.js';

export const DRIFT_UNEXPECTED_RULE = 'svc.drift.unexpected';
export const DRIFT_UNUSED_RULE = 'svc.drift.unused';
export const ESCALATION_RULE = 'svc.attack-path.escalation';
export const DETECTOR_RULES = [DRIFT_UNEXPECTED_RULE, DRIFT_UNUSED_RULE, ESCALATION_RULE] as const;

/** Description and help text of svc's own rules (the SARIF run's driver rules). */
export const DETECTOR_RULE_TEXT: Readonly<Record<string, { description: string; help: string }>> = {
  [DRIFT_UNEXPECTED_RULE]: {
    description: 'An access was observed that no grant covers (access-map drift: observed but not permitted).',
    help:
      'An agent, session or identity used a resource it holds no grant for. Either record the grant (POST /v1/m/accessmap/grants) if ' +
      'the access is intended, or stop it at its source. The finding resolves by itself once a grant covers the access.',
  },
  [DRIFT_UNUSED_RULE]: {
    description: 'A grant was never observed in use (access-map drift: permitted but never observed).',
    help:
      'A principal holds a grant that no connected signal source has seen it use. Absence of a signal is not proof: check the sources, ' +
      'then revoke the grant (POST /v1/m/accessmap/grants/revoke) if it is not needed. The finding resolves once the grant is used or ' +
      'revoked.',
  },
  [ESCALATION_RULE]: {
    description: 'An agent can come to act as another principal through credentials or writable code/config (access-map attack path).',
    help:
      'The evidence (GET /v1/m/security/findings/{id}/evidence) holds the shortest path. Break a hop: revoke the credential read, or ' +
      'the write onto code/config another principal runs. The finding resolves once no path remains.',
  },
};

export interface DetectorBounds {
  /** drift items read per run; beyond it the walk is incomplete */
  maxDrift: number;
  /** agents whose escalation is searched per run */
  maxAgents: number;
  /** edges each escalation search may examine */
  budget: number;
}

/**
 * Pauses an evaluation between its steps. SQLite's queries resolve at once, so a loop of awaits on
 * them never leaves the microtask queue: unpaced, a run over a large drift set was one block of
 * seconds in which no ingest batch was read or acknowledged. Every step is followed at least by a
 * turn of the event loop and, with `factor` > 0, by a pause `factor` times the time since the last
 * pause, so a background run takes at most 1/(1 + factor) of the main thread. The time since the
 * last pause is wall time: it includes waits (a merge on the worker, the writer's queue), which on a
 * loaded host can be long, so a pause is at most MAX_PAUSE_MS and a small run stays prompt.
 */
export class Pacer {
  #resumed = performance.now();
  /** ms spent in pauses so far */
  pausedMs = 0;
  constructor(
    readonly factor: number,
    readonly signal?: AbortSignal,
  ) {}
  /**
   * Pauses. While reading (`abortable`), throws the signal's reason once it is aborted: a stopping
   * server ends a background run between steps. While writing, an aborted run finishes unpaced, so
   * what it committed gets its ledger record and events.
   */
  async breathe(abortable = true): Promise<void> {
    if (abortable) this.signal?.throwIfAborted();
    const busy = performance.now() - this.#resumed;
    const pace = this.signal?.aborted ? 0 : this.factor;
    const pause = Math.min(MAX_PAUSE_MS, busy * pace);
    await (pause >= 1
      ? new Promise((resolve) => setTimeout(resolve, pause))
      : new Promise((resolve) => setImmediate(resolve)));
    if (abortable) this.signal?.throwIfAborted();
    const now = performance.now();
    this.pausedMs += now - this.#resumed - busy;
    this.#resumed = now;
  }
}

/** The longest pause between two steps of a paced run. */
const MAX_PAUSE_MS = 1_000;

/** Drift items read, and detector reports stored, per step (each write step is its own transaction). */
const STEP_ITEMS = 100;

export const DEFAULT_DETECTOR_BOUNDS: DetectorBounds = { maxDrift: 50_000, maxAgents: 200, budget: 100_000 };

export interface DetectorOutcome {
  reported: Finding[];
  resolved: Finding[];
  repeated: number;
  drift: { items: number; complete: boolean };
  escalation: { agents: number; paths: number; complete: boolean };
}

const DRIFT_SEVERITY: Record<string, FindingSeverity> = { high: 'high', medium: 'medium', low: 'low' };

const who = (kind: string, id: string, name: string | null): string => `${kind} ${name ? JSON.stringify(name) : id}`;

/** The finding report of one drift item. */
export function driftReport(d: DriftItem): FindingReport {
  const origin = who(d.origin_kind, d.origin_id, d.origin_name);
  const resource = d.resource_name ?? d.resource_id;
  const unexpected = d.drift === 'unexpected';
  return {
    rule_id: unexpected ? DRIFT_UNEXPECTED_RULE : DRIFT_UNUSED_RULE,
    kind: 'drift',
    severity: unexpected ? (DRIFT_SEVERITY[d.drift_confidence] ?? 'medium') : 'low',
    subject_kind: 'access',
    subject_ref: `${d.origin_kind}:${d.origin_id} ${d.mode} ${d.resource_id}`,
    message: unexpected
      ? `${origin} accessed ${resource} (${d.mode}) without a covering grant; ${d.basis}`
      : `${origin} holds a ${d.mode} grant on ${resource} that was never observed in use; ${d.basis}`,
    tags: ['drift', d.drift, `confidence:${d.drift_confidence}`],
    evidence: { drift: d },
    ...(d.last_seen ? { observed_at: d.last_seen } : {}),
  };
}

/** The finding report of one escalation target. */
export function escalationReport(
  agent: { id: string; name: string },
  target: { kind: string; id: string; name: string | null },
  path: AttackPath,
): FindingReport {
  return {
    rule_id: ESCALATION_RULE,
    kind: 'attack_path',
    severity: path.confidence === 'high' ? 'high' : 'medium',
    subject_kind: 'attack_path',
    subject_ref: `agent:${agent.id} -> ${target.kind}:${target.id}`,
    message:
      `agent ${JSON.stringify(agent.name)} can come to act as ${who(target.kind, target.id, target.name)} in ${path.length} hop(s) ` +
      `(${path.hops.map((h) => h.via).join(' → ')}); path confidence ${path.confidence}`,
    tags: ['attack-path', 'escalation', `confidence:${path.confidence}`],
    evidence: { agent, target, path },
  };
}

/** Every drift item of the tenant, up to `max`; complete says whether the walk reached the end. */
async function allDrift(store: Store, tenant: string, max: number, pacer: Pacer): Promise<{ items: DriftItem[]; complete: boolean }> {
  const items: DriftItem[] = [];
  let cursor: string | undefined;
  for (;;) {
    // The first page folds the recent level; the rest read the edges as of then (no merge per page).
    const page = await listDrift(
      store,
      tenant,
      { limit: Math.min(STEP_ITEMS, Math.max(1, max - items.length)), ...(cursor ? { cursor } : {}) },
      { fold: cursor === undefined },
    );
    items.push(...page.items);
    await pacer.breathe();
    if (!page.has_more || !page.cursor) return { items, complete: true };
    if (items.length >= max) return { items, complete: false };
    cursor = page.cursor;
  }
}

/**
 * Runs the detectors on one tenant's graph now: reports what they see, resolves what is gone. A
 * background run passes a pacer with a factor, so it yields the main thread to requests and ingest.
 */
export async function evaluateDetectors(
  store: Store,
  tenant: string,
  bounds: DetectorBounds = DEFAULT_DETECTOR_BOUNDS,
  inTx?: FindingsInTx<DetectorOutcome>,
  pacer: Pacer = new Pacer(0),
): Promise<DetectorOutcome> {
  const drift = await allDrift(store, tenant, bounds.maxDrift, pacer);
  // Reports are made, and their keys hashed, a step at a time: 50,000 at once held the main thread for half a second.
  const reports: FindingReport[] = [];
  for (let i = 0; i < drift.items.length; i += STEP_ITEMS) {
    for (const d of drift.items.slice(i, i + STEP_ITEMS)) reports.push(driftReport(d));
    await pacer.breathe();
  }
  const incompleteAgents = new Set<string>();
  let agents = 0;
  let paths = 0;
  let agentsComplete = true;
  let cursor: string | undefined;
  while (agents < bounds.maxAgents) {
    const page = await listAgents(store, tenant, { limit: Math.min(100, bounds.maxAgents - agents), ...(cursor ? { cursor } : {}) });
    for (const a of page.items) {
      agents++;
      const esc = await withFoldedGraph(store, tenant, (g) =>
        escalation(g, a.id, { maxDepth: 6, maxNodes: 20_000, limit: 100, budget: bounds.budget }),
      );
      await pacer.breathe();
      if (!esc.complete || esc.truncated) incompleteAgents.add(a.id);
      for (const t of esc.targets) {
        reports.push(escalationReport({ id: a.id, name: a.name }, t.target, t.path));
        paths++;
      }
    }
    if (!page.has_more || !page.cursor) break;
    cursor = page.cursor;
    if (agents >= bounds.maxAgents) agentsComplete = false;
  }
  const present = new Set<string>();
  const drift0 = { items: drift.items.length, complete: drift.complete };
  const escalation0 = { agents, paths, complete: agentsComplete && incompleteAgents.size === 0 };
  // The reports go in a chunk per transaction: one transaction for a tenant's whole drift set
  // (up to 50,000 rows) held the single writer for seconds, and every ingest batch waited behind it.
  const reported: Finding[] = [];
  let repeated = 0;
  for (let i = 0; i < reports.length; i += STEP_ITEMS) {
    const part = reports.slice(i, i + STEP_ITEMS);
    await pacer.breathe(false);
    for (const r of part) present.add(naturalKey(r));
    await store.withTenant(tenant, async (tx) => {
      const up = await upsertReportsInTx(tx, tenant, 'detector', part, 'system');
      reported.push(...up.reported);
      repeated += up.repeated;
      await inTx?.(tx, { reported: up.reported, resolved: [], repeated: up.repeated, drift: drift0, escalation: escalation0 });
    });
  }
  return store.withTenant(tenant, async (tx) => {
    const rules = [...(drift.complete ? [DRIFT_UNEXPECTED_RULE, DRIFT_UNUSED_RULE] : []), ...(agentsComplete ? [ESCALATION_RULE] : [])];
    // An agent whose search was cut short keeps its escalation findings: absence is unproven there.
    const keep = (f: Finding): boolean =>
      f.rule_id === ESCALATION_RULE && incompleteAgents.has(/^agent:([0-9a-f-]{36}) /.exec(f.subject_ref)?.[1] ?? '');
    const resolved =
      rules.length > 0
        ? await resolveAbsent(tx, tenant, 'detector', rules, present, 'no longer detected: the ' + 'access map no longer shows it', keep)
        : [];
    await inTx?.(tx, { reported: [], resolved, repeated: 0, drift: drift0, escalation: escalation0 });
    return { reported, resolved, repeated, drift: drift0, escalation: escalation0 };
  });
}
