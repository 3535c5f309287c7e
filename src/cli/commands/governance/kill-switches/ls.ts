import { BaseCommand, ClientCommand } from '../../../client/base-command.js';
import { KILL_SWITCHES, killSwitchTable, type KillSwitchView } from './support.js';

/** `svc governance kill-switches ls`: the engaged kill switches of the tenant. */
export class GovernanceKillSwitchesLsCommand extends ClientCommand {
  static override paths = [['governance', 'kill-switches', 'ls']];
  static override usage = BaseCommand.Usage({
    category: 'Governance',
    description: `List engaged kill switches, tenant-wide (scope ` + `\`tenant\`) or per agent (GET ${KILL_SWITCHES})`,
  });

  async execute(): Promise<number> {
    const list = (await this.withClient((c) => c.get(KILL_SWITCHES))).body as { items: KillSwitchView[] };
    this.emit(list, (l) => (l.items.length === 0 ? 'no kill switch engaged' : killSwitchTable(l.items)));
    return 0;
  }
}
