/** Shared pieces of `svc governance kill-switches …`. */
import { table } from '../../auth/support.js';

export const KILL_SWITCHES = '/v1/m/governance/pep/kill-switches';

export type KillSwitchView = { scope: string; reason: string; created_by: string; created_at: string };

export function killSwitchTable(items: KillSwitchView[]): string {
  return table(items, [
    ['scope', (k) => k.scope],
    ['reason', (k) => k.reason],
    ['by', (k) => k.created_by],
    ['since', (k) => k.created_at],
  ]);
}

/** What `--agent` names: the `agent_id` the hook reports, or the credential actor (`token:<id>`) when it reports none. */
export const AGENT_HELP = 'The agent_id the hook reports, or a credential actor token:<id>; absent: the whole tenant';
