import { Option } from 'clipanion';
import { BaseCommand, ClientCommand, yesOption } from '../../client/base-command.js';
import { resolveRef } from '../../client/resolve.js';

/** `svc agent rm <id>`: delete an agent and its access edges. */
export class AgentRmCommand extends ClientCommand {
  static override paths = [['agent', 'rm']];

  static override usage = BaseCommand.Usage({
    category: 'Agents',
    description: 'Delete an agent (by id, name or external id) and its access edges (DELETE /v1/agents/{id})',
    details: 'Destructive: needs `-y` when stdin is not a terminal. `--version` makes the delete fail (409, exit 5) if the agent changed.',
    examples: [['Delete without prompting', '$0 agent rm <id> -y']],
  });

  id = Option.String({ name: 'agent', required: true });
  version = Option.String('--version', { description: 'Only delete if the agent is still at this version' });
  yes = yesOption();

  async execute(): Promise<number> {
    await this.requireYes(this.yes, `delete agent ${this.id} and its access edges`);
    const id = await this.withClient(async (c) => {
      const { id } = await resolveRef(c, this.id, ['agent'], 'agent');
      await c.request('DELETE', `/v1/agents/${id}`, { query: { version: this.version } });
      return id;
    });
    this.emit({ deleted: id }, (d) => `deleted agent ${d.deleted}`);
    return 0;
  }
}
