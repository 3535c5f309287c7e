/** Shared pieces of `svc accessmap`: the filter flags of graph and drift, edge tables, path lines. */
import { Option } from 'clipanion';
import { ClientCommand } from '../../client/base-command.js';
import type { HttpClient } from '../../client/http-client.js';
import { resolveRef } from '../../client/resolve.js';
import { table } from '../auth/support.js';

export type EdgeView = {
  id: string;
  origin_kind: string;
  origin_id: string;
  origin_name: string | null;
  resource_id: string;
  resource_name: string | null;
  mode: string;
  permitted: boolean;
  observed: boolean;
  observed_count: number;
  last_seen: string | null;
  confidence: string | null;
  signal_source: string;
};

export type HopView = {
  from: { kind: string; name: string | null; id: string };
  to: { kind: string; name: string | null; id: string };
  via: string;
  mode: string | null;
  basis: string;
};
export type PathView = { length: number; confidence: string; hops: HopView[] };
/** How far an attack-path search got (the answer's `complete`, `examined`, `truncated` and total). */
export type ExtentView = {
  truncated: boolean;
  complete: boolean;
  examined: { edges: number; budget: number };
  total?: number;
  total_at_least?: number;
};

/** The `--budget` flag of the attack-path searches. */
export const budgetOption = () =>
  Option.String('--budget', { description: 'Access edges the search may examine (work budget; default and cap: see docs/accessmap.md)' });

/** Whether a search answer is truncated, and why: a stopped search (its total a lower bound) or more paths than returned. */
export function truncationNote(r: ExtentView): string {
  if (!r.complete)
    return `truncated: search stopped, ${r.examined.edges} edges examined of a budget of ${r.examined.budget} (--budget raises it)`;
  return r.truncated ? 'truncated: more paths exist' : '';
}

/** The footer of reachability and exfil: `total: n`, or `total: at least n` when the search stopped, and the truncation note. */
export function totalLine(r: ExtentView): string {
  const note = truncationNote(r);
  return `total: ${r.total ?? `at least ${r.total_at_least}`}${note ? ` (${note})` : ''}`;
}

/** Base of `graph` and `drift`: the filter flags of the spec's client inputs, as inherited fields. */
export abstract class EdgeFilterCommand extends ClientCommand {
  confidence = Option.String('--confidence', { description: 'Only this attribution confidence or stronger: high, medium, low' });
  cursor = Option.String('--cursor', { description: 'Continue after this cursor (from the previous page)' });
  limit = Option.String('--limit', { description: 'Page size 1..1000; 0 (default) means the engine default' });
  mode = Option.String('--mode', { description: 'Only this access mode: r or rw' });
  originId = Option.String('--origin-id', { description: 'Only edges from this agent, session or identity: its id, name or external id' });
  originKind = Option.String('--origin-kind', { description: 'Only edges from this kind of origin: agent, session, identity' });
  resourceId = Option.String('--resource-id', { description: 'Only edges to this resource: its id, name or natural key' });
  signalSource = Option.String('--signal-source', { description: 'Only edges whose signal source is this' });

  /** The query from the parsed flags (absent flags are not sent); names in --origin-id and --resource-id resolved to ids. */
  protected async filterQuery(client: HttpClient): Promise<Record<string, string | undefined>> {
    const origin =
      this.originId === undefined ? undefined : await resolveRef(client, this.originId, ['agent', 'session', 'identity'], '--origin-id');
    const resource = this.resourceId === undefined ? undefined : await resolveRef(client, this.resourceId, ['resource'], '--resource-id');
    return {
      confidence: this.confidence,
      cursor: this.cursor,
      limit: this.limit,
      mode: this.mode,
      origin_id: origin?.id,
      origin_kind: this.originKind ?? origin?.kind,
      resource_id: resource?.id,
      signal_source: this.signalSource,
    };
  }
}

const nameOf = (n: { name: string | null; id: string }) => n.name ?? n.id;

/** Text rendering of edges. */
export function edgeTable<T extends EdgeView>(items: T[], extra: ReadonlyArray<[string, (e: T) => unknown]> = []): string {
  return table<T>(items, [
    ['origin', (e) => `${e.origin_kind}:${e.origin_name ?? e.origin_id}`],
    ['resource', (e) => e.resource_name ?? e.resource_id],
    ['mode', (e) => e.mode],
    ['permitted', (e) => e.permitted],
    ['observed', (e) => (e.observed ? e.observed_count : 'no')],
    ['confidence', (e) => e.confidence],
    ['source', (e) => e.signal_source || '-'],
    ...extra,
  ]);
}

/** One line per path: `A =writes(rw)=> B =credential=> svc =access(rw)=> db`. */
export function pathLine(p: PathView): string {
  const first = p.hops[0];
  if (!first) return '(empty path)';
  return (
    `${nameOf(first.from)} ` +
    `${p.hops.map((h) => `=${h.via}${h.mode ? `(${h.mode})` : ''}${h.basis === 'observed' ? '?' : ''}=> ${nameOf(h.to)}`).join(' ')}`
  );
}
