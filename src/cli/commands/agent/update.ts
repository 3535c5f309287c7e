import { Option } from 'clipanion';
import { BaseCommand, ClientCommand } from '../../client/base-command.js';
import { resolveRef } from '../../client/resolve.js';
import { agentFields, parseLabels, type AgentView } from './support.js';

/** `svc agent update <id>`: merge-patch an agent with optimistic concurrency. */
export class AgentUpdateCommand extends ClientCommand {
  static override paths = [['agent', 'update']];

  static override usage = BaseCommand.Usage({
    category: 'Agents',
    description: 'Change an agent (by id, name or external id; PATCH /v1/agents/{id}): only the given fields change',
    details: `
      A merge: flags you leave out keep their value; \`--label k=v\` sets one label and \`--unlabel k\`
      removes one, other labels stay. The change is based on \`--version\`; without it the current
      version is read first. If the agent changed in between, the server answers 409 (exit 5) and
      nothing is changed.
    `,
    examples: [
      ['Pause an agent', '$0 agent update <id> --status paused'],
      ['Guarded by a known version', '$0 agent update <id> --version 3 --label tier=gold --unlabel legacy'],
    ],
  });

  id = Option.String({ name: 'agent', required: true });
  version = Option.String('--version', { description: 'The version the change is based on (default: the current one)' });
  name = Option.String('--name', { description: 'New display name' });
  kind = Option.String('--kind', { description: 'New kind' });
  externalId = Option.String('--external-id', { description: 'New external id' });
  status = Option.String('--status', { description: 'active, paused or disabled' });
  label = Option.Array('--label', { description: 'Set a label key=value (repeatable)' });
  unlabel = Option.Array('--unlabel', { description: 'Remove a label (repeatable)' });

  async execute(): Promise<number> {
    const agent = await this.withClient(async (c) => {
      const path = `/v1/agents/${(await resolveRef(c, this.id, ['agent'], 'agent')).id}`;
      const version = this.version !== undefined ? Number(this.version) : ((await c.get(path)).body as AgentView).version;
      const labels: Record<string, string | null> = { ...(parseLabels(this.label) ?? {}) };
      for (const k of this.unlabel ?? []) labels[k] = null;
      const body = {
        version,
        name: this.name,
        kind: this.kind,
        external_id: this.externalId,
        status: this.status,
        labels: Object.keys(labels).length > 0 ? labels : undefined,
      };
      return (await c.request('PATCH', path, { body: JSON.parse(JSON.stringify(body)) })).body as AgentView;
    });
    this.emit(agent, agentFields);
    return 0;
  }
}
