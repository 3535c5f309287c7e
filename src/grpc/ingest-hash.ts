/**
 * The `payload_hash` of an `ingest.batch` ledger record (ingest.proto "Durability"): SHA-256 of the
 * RFC 8785 canonical JSON of `{batch_id, edges, findings, costs}` over the accepted items, without
 * their batch indexes.
 *
 * Edges are most of every batch, so their canonical text is written directly rather than through
 * the generic `canonicalMeta`. That generic path walks every value twice, once to check it and
 * once to sort its keys, and it took most of the hashing time in the ingest profile. A valid
 * edge's shape is fixed (ingest-items.ts `ValidEdge`): its keys are known and are written already
 * sorted. Its strings are serialised as JCS serialises them (JSON.stringify), and its one number
 * is a safe integer. The strings come from the protobuf decoder, which decodes UTF-8 and so never
 * hands over a lone surrogate, the one input the generic path would refuse. A test checks that
 * both paths give the same bytes. Findings and cost samples are rare and keep the generic path.
 */
import { createHash } from 'node:crypto';
import { canonicalMeta } from '../ledger/canonical-json.js';
import type { NodeRef, ValidCost, ValidEdge, ValidFinding } from './ingest-items.js';

const str = JSON.stringify;

function nodeText(n: NodeRef, kind?: string): string {
  const key = n.id !== undefined ? `"id":${str(n.id)}` : `"ref":${str(n.ref)}`;
  if (kind === undefined) return `{${key}}`;
  // "id" < "kind" < "ref"
  return n.id !== undefined ? `{${key},"kind":${str(kind)}}` : `{"kind":${str(kind)},${key}}`;
}

/** Canonical JSON of one edge without its index; keys in JCS order. */
export function canonicalEdge(e: ValidEdge): string {
  return (
    `{"attribution":${str(e.attribution)},"confidence":${str(e.confidence)},"count":${e.count},"mode":${str(e.mode)},` +
    (`"observed_at":${str(e.observed_at)},"origin":${nodeText(e.origin, e.origin.kind)},"resource":${nodeText(e.resource)},` +
      `"signal_source":${str(e.signal_source)}}`)
  );
}

function withoutIndex<T extends { index: number }>({ index: _i, ...rest }: T): Omit<T, 'index'> {
  return rest;
}

/** Hex SHA-256 of the canonical accepted items of a batch. */
export function payloadHash(
  batchId: string,
  edges: readonly ValidEdge[],
  findings: readonly ValidFinding[],
  costs: readonly ValidCost[],
): string {
  const costsText = canonicalMeta({ costs: costs.map(withoutIndex) }).slice('{"costs":'.length, -1);
  const findingsText = canonicalMeta({ findings: findings.map(withoutIndex) }).slice('{"findings":'.length, -1);
  const text =
    `{"batch_id":${str(batchId)},"costs":${costsText},` +
    `"edges":[${edges.map(canonicalEdge).join(',')}],"findings":${findingsText}}`;
  return createHash('sha256').update(text).digest('hex');
}
