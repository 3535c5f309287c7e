/**
 * What bounds an attack-path search: depth, visited principals, the work budget of access edges examined, and what the answer says of its
 * extent.
 */
import { type Confidence, type Mode, type NodeKind } from './model.js';

export type HopVia = 'runs' | 'credential' | 'writes' | 'access';
export type HopBasis = 'structure' | 'permitted' | 'observed' | 'permitted+observed';

export interface NodeRef {
  kind: NodeKind;
  id: string;
  name: string | null;
}

export interface Hop {
  from: NodeRef;
  to: NodeRef;
  via: HopVia;
  /** the resource the hop goes through (`credential`, `writes`) or ends at (`access`) */
  resource_id: string | null;
  mode: Mode | null;
  basis: HopBasis;
  /** attribution confidence when the hop rests on observation only; null for grants and structure */
  confidence: Confidence | null;
}

export interface AttackPath {
  length: number;
  /** the weakest confidence of any observation-only hop; `high` when every hop is a grant or structure */
  confidence: Confidence;
  hops: Hop[];
}

export interface SearchBounds {
  maxDepth: number;
  maxNodes: number;
  limit: number;
  /** access edges the search may examine */
  budget: number;
}

/** The default work budget: well inside the 100 ms reachability target on SQLite (docs/perf/accessmap-benchmark.md). */
export const DEFAULT_BUDGET = 10_000;
/** The most a client may ask for: an exact answer in an estate of up to about this many edges. */
export const MAX_BUDGET = 2_000_000;

export const DEFAULT_BOUNDS: SearchBounds = { maxDepth: 6, maxNodes: 20_000, limit: 100, budget: DEFAULT_BUDGET };

/** How far a search got: whether anything within `max_depth` was left unexamined, and the work it did. */
export interface SearchExtent {
  /** false when the budget or `maxNodes` stopped the search before it examined everything within `maxDepth` */
  complete: boolean;
  examined: { edges: number; budget: number };
}

/** The work of one search: access edges examined against its budget; `cut` once a read left edges unread. */
export class Work {
  examined = 0;
  cut = false;
  constructor(readonly budget: number) {}

  /** Reads at most the edges left (one more, to see whether any remain unread) and counts them; nothing once cut. */
  async read<T>(fetch: (limit: number) => Promise<T[]>): Promise<T[]> {
    if (this.cut) return [];
    const left = this.budget - this.examined;
    const rows = await fetch(left + 1);
    if (rows.length > left) {
      this.cut = true;
      rows.length = left;
    }
    this.examined += rows.length;
    return rows;
  }

  extent(nodesCut: boolean): SearchExtent {
    return { complete: !this.cut && !nodesCut, examined: { edges: this.examined, budget: this.budget } };
  }
}

