import { Option } from 'clipanion';
import { BaseCommand, ClientCommand, yesOption } from '../../../client/base-command.js';
import { AGENT_HELP, KILL_SWITCHES } from './support.js';

/** `svc governance kill-switches release`: decisions follow policy again. */
export class GovernanceKillSwitchesReleaseCommand extends ClientCommand {
  static override paths = [['governance', 'kill-switches', 'release']];
  static override usage = BaseCommand.Usage({
    category: 'Governance',
    description:
      `Release a kill switch, tenant-wide or for --agent (POST ${KILL_SWITCHES}/release); exit 4 when none is engaged; needs -y when ` +
      `not interactive`,
  });

  agent = Option.String('--agent', { description: AGENT_HELP });
  yes = yesOption();

  async execute(): Promise<number> {
    await this.requireYes(this.yes, `release the kill switch of ${this.agent ?? 'the whole tenant'}`);
    await this.withClient((c) => {
      const agent = this.agent;
      return c.request('POST', `${KILL_SWITCHES}/release`, { body: agent !== undefined ? { agent } : {} });
    });
    this.emit({ released: this.agent ?? 'tenant' }, () => `released: ${this.agent ?? 'tenant'}`);
    return 0;
  }
}
