/** The access map forgets an agent's edges when the agent is deleted (a cascade on `delete agent`). */
import type { RecordHookDecl } from '../../contract/record-hooks.js';
import { nowTimestamp } from '../../ledger/time.js';
import { appendForget } from './recent-edges.js';

export const forgetAgentEdges: RecordHookDecl = {
  action: 'delete',
  kind: 'agent',
  phase: 'cascade',
  name: 'accessmap.forget-agent-edges',
  // An edge to a missing origin would be unexplainable. Edges are found by the agent's node number
  // (migration 10), which the edge key starts with. On SQLite the delete is an operation of the
  // recent level, behind whatever of the agent waits there (migration 16), and this transaction
  // does not write the edge file (sqlite-edge-file.ts).
  async run({ store, tx, tenant, id }) {
    const numbered = await tx.selectFrom('agents').select('no').where('tenant_id', '=', tenant).where('id', '=', id).executeTakeFirst();
    if (numbered?.no == null) return;
    const db = store.sqlite?.handle(tx);
    if (db !== undefined) appendForget(db, tenant, id, Number(numbered.no), nowTimestamp());
    else await tx.deleteFrom('access_edges').where('tenant_id', '=', tenant).where('origin_no', '=', Number(numbered.no)).execute();
    await tx.updateTable('access_nodes').set({ parent_id: null }).where('tenant_id', '=', tenant).where('parent_id', '=', id).execute();
  },
};
