import { Option } from 'clipanion';
import { BaseCommand, ClientCommand } from '../../client/base-command.js';
import { agentFields, parseLabels, type AgentView } from './support.js';

/** `svc agent create`: register an agent. */
export class AgentCreateCommand extends ClientCommand {
  static override paths = [['agent', 'create']];

  static override usage = BaseCommand.Usage({
    category: 'Agents',
    description: 'Register an agent (POST /v1/agents)',
    examples: [
      ['A coding agent with labels', '$0 agent create --name payments-copilot --kind coding --external-id cc-42 --label team=payments'],
    ],
  });

  name = Option.String('--name', { required: true, description: 'Display name' });
  kind = Option.String('--kind', { description: 'Kind, e.g. coding, support (default agent)' });
  externalId = Option.String('--external-id', { description: "The agent's id in its own runtime (unique per tenant)" });
  status = Option.String('--status', { description: 'active (default), paused or disabled' });
  label = Option.Array('--label', { description: 'A label key=value (repeatable)' });

  async execute(): Promise<number> {
    const body = { name: this.name, kind: this.kind, external_id: this.externalId, status: this.status, labels: parseLabels(this.label) };
    const agent = (await this.withClient((c) => c.request('POST', '/v1/agents', { body: JSON.parse(JSON.stringify(body)) })))
      .body as AgentView;
    this.emit(agent, agentFields);
    return 0;
  }
}
