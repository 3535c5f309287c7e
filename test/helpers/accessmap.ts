import { listEdges } from '../../src/modules/accessmap/edge-query.js';
import type { AccessEdge } from '../../src/modules/accessmap/model.js';
import type { Store } from '../../src/store/store.js';

/** Every access edge of `tenant`, read page by page through the service's own listing (each read folds what waits first). */
export async function readAllEdges(store: Store, tenant: string): Promise<AccessEdge[]> {
  const out: AccessEdge[] = [];
  let cursor: string | undefined;
  do {
    const page = await listEdges(store, tenant, { limit: 1000, ...(cursor ? { cursor } : {}) });
    out.push(...page.items);
    cursor = page.has_more ? page.cursor : undefined;
  } while (cursor);
  return out;
}
