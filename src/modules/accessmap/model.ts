/** Vocabulary of the access graph (spec "Access-graph edge"; docs/accessmap.md "Model"). */

export const ORIGIN_KINDS = ['agent', 'session', 'identity'] as const;
export type OriginKind = (typeof ORIGIN_KINDS)[number];

export const NODE_KINDS = ['agent', 'session', 'identity', 'resource'] as const;
export type NodeKind = (typeof NODE_KINDS)[number];

export const MODES = ['r', 'rw'] as const;
export type Mode = (typeof MODES)[number];

/** Attribution confidence, strongest first. */
export const CONFIDENCES = ['high', 'medium', 'low'] as const;
export type Confidence = (typeof CONFIDENCES)[number];

/**
 * What a resource is to the principals that read it (attack-path semantics): `data` is only
 * read; `config` is read as configuration and `code` is executed, so whoever can write them
 * controls their readers; `credential` authenticates its reader as its identity (`parent_id`).
 */
export const RESOURCE_CLASSES = ['data', 'config', 'code', 'credential'] as const;
export type ResourceClass = (typeof RESOURCE_CLASSES)[number];

/** How the source attributed an observation to its origin; caps the confidence it may claim. */
export const ATTRIBUTIONS = ['direct', 'inferred', 'shared_identity'] as const;
export type Attribution = (typeof ATTRIBUTIONS)[number];

/** The engine default page size where `limit=0` (spec client inputs: "limit (0 means engine default)"). */
export const ENGINE_DEFAULT_LIMIT = 100;

const RANK: Record<Confidence, number> = { high: 3, medium: 2, low: 1 };

/** The stronger of two confidences. */
export function strongerConfidence(a: Confidence, b: Confidence): Confidence {
  return RANK[a] >= RANK[b] ? a : b;
}

/** The weaker of two confidences. */
export function weakerConfidence(a: Confidence, b: Confidence): Confidence {
  return RANK[a] <= RANK[b] ? a : b;
}

/** Confidences at least as strong as `min` (the `confidence` filter is a floor). */
export function confidencesAtLeast(min: Confidence): Confidence[] {
  return CONFIDENCES.filter((c) => RANK[c] >= RANK[min]);
}

/**
 * The most a source may claim for an attribution: a shared service account cannot tell which
 * agent used it, so such an attribution is at most `low`; an inferred one at most `medium`.
 */
export function capConfidence(claimed: Confidence, attribution: Attribution): Confidence {
  if (attribution === 'shared_identity') return weakerConfidence(claimed, 'low');
  if (attribution === 'inferred') return weakerConfidence(claimed, 'medium');
  return claimed;
}

/** True when access in `have` mode includes access in `need` mode (`rw` includes `r`). */
export function modeCovers(have: Mode, need: Mode): boolean {
  return have === 'rw' || need === 'r';
}

/** An access edge as the API serves it. */
export interface AccessEdge {
  id: string;
  origin_kind: OriginKind;
  origin_id: string;
  origin_name: string | null;
  resource_id: string;
  resource_name: string | null;
  mode: Mode;
  permitted: boolean;
  grant_source: string;
  observed: boolean;
  observed_count: number;
  first_seen: string | null;
  last_seen: string | null;
  /** attribution confidence of the observations; null when never observed */
  confidence: Confidence | null;
  signal_source: string;
  updated_at: string;
}

/** A node as the algorithms see it. */
export interface GraphNode {
  id: string;
  kind: NodeKind;
  name: string;
  class: ResourceClass | null;
  /** sessions: their agent; credential resources: the identity they authenticate as */
  parent_id: string | null;
}

/** One access a revoke names, by node numbers. */
export interface RevokedAccess {
  origin_no: number;
  resource_no: number;
  mode: string;
}
