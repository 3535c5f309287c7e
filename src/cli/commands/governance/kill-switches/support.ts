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

/** What `--agent` names: an agent (resolved to its id by the server), or the credential actor (`token:<id>`). */
export const AGENT_HELP =
  "The agent's id, external id or name (the server stores its id; unknown: exit 4 with close names; several agents: exit 5), or a " +
  'credential token:<API key id or name> / user:<id or e-mail>; absent: the whole tenant';
