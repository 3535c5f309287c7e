import { Option } from 'clipanion';
import { BaseCommand, ClientCommand, yesOption } from '../../../client/base-command.js';
import { fields } from '../../auth/support.js';
import { AGENT_HELP, KILL_SWITCHES, type KillSwitchView } from './support.js';

/** `svc governance kill-switches engage`: deny every tool decision of the tenant, or of one agent, until released. */
export class GovernanceKillSwitchesEngageCommand extends ClientCommand {
  static override paths = [['governance', 'kill-switches', 'engage']];
  static override usage = BaseCommand.Usage({
    category: 'Governance',
    description:
      `Engage a kill switch: every policy decision for the tenant, or for --agent, is deny until released (POST ${KILL_SWITCHES}); ` +
      `needs -y when not interactive`,
    examples: [
      ['Stop one agent', '$0 governance kill-switches engage --agent agent-7 --reason "exfiltration suspected" -y'],
      ['Stop every agent of the tenant', '$0 governance kill-switches engage --reason "incident 4711" -y'],
    ],
  });

  agent = Option.String('--agent', { description: AGENT_HELP });
  reason = Option.String('--reason', { description: 'Why (kept with the switch and in the ledger)' });
  yes = yesOption();

  async execute(): Promise<number> {
    await this.requireYes(this.yes, `deny every decision for ${this.agent ?? 'the whole tenant'}`);
    const ks = (
      await this.withClient((c) => {
        const agent = this.agent;
        return c.request('POST', KILL_SWITCHES, {
          body: { ...(agent !== undefined ? { agent } : {}), ...(this.reason !== undefined ? { reason: this.reason } : {}) },
        });
      })
    ).body as KillSwitchView;
    this.emit(ks, (k) => fields(k));
    return 0;
  }
}
