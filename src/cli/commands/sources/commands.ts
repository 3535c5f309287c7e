/** `svc sources ls|set|rm`: the collector source roster (`/v1/console/sources`). */
import { Option } from 'clipanion';
import { BaseCommand, ClientCommand, yesOption } from '../../client/base-command.js';
import { CliUsageError } from '../../client/errors.js';
import { ExitCode } from '../../client/exit-codes.js';

interface Source {
  name: string;
  kind: string;
  tenant: string;
  enabled: boolean;
  poll_interval_s: number;
  config: Record<string, unknown>;
  last_seen_at: string | null;
  counts: Record<string, number>;
}

export class SourcesLsCommand extends ClientCommand {
  static override paths = [['sources', 'ls']];
  static override usage = BaseCommand.Usage({
    category: 'Connectors',
    description: 'List the collector sources: kind, tenant, enabled, poll interval, last seen, counts',
    examples: [
      ['List', '$0 sources ls'],
      ['Of one tenant, JSON', '$0 sources ls --tenant 0197… -o json'],
    ],
  });
  async execute(): Promise<number> {
    const body = (
      await this.withClient((c) => c.request('GET', '/v1/console/sources', { query: this.tenant ? { tenant: this.tenant } : {} }))
    ).body as { items: Source[] };
    this.emit(body, (v) =>
      v.items.length === 0
        ? 'no source in the roster'
        : [
            'NAME  KIND  TENANT  ENABLED  POLL  LAST SEEN  CONFIG',
            ...v.items.map(
              (s) =>
                `${s.name}  ${s.kind}  ${s.tenant}  ${s.enabled ? 'yes' : 'no'}  ${s.poll_interval_s}s  ` +
                `${s.last_seen_at ?? 'never'}  ${JSON.stringify(s.config)}`,
            ),
          ].join('\n'),
    );
    return ExitCode.OK;
  }
}

export class SourcesSetCommand extends ClientCommand {
  static override paths = [['sources', 'set']];
  static override usage = BaseCommand.Usage({
    category: 'Connectors',
    description: 'Create or replace a collector source in the roster',
    examples: [
      ['A JSONL file', '$0 sources set edge-logs --kind jsonl --tenant 0197… --path /var/log/agent/access.jsonl --poll-interval 30'],
    ],
  });
  name = Option.String({ name: 'name' });
  kind = Option.String('--kind', { required: true, description: 'jsonl or dir' });
  sourcePath = Option.String('--path', { required: true, description: 'the file (jsonl) or directory (dir) the collector reads' });
  poll = Option.String('--poll-interval', { description: 'seconds (default 60)' });
  disabled = Option.Boolean('--disabled', false);
  async execute(): Promise<number> {
    if (this.poll !== undefined && !/^\d+$/.test(this.poll)) throw new CliUsageError('--poll-interval must be a whole number of seconds');
    if (this.tenant === undefined) throw new CliUsageError('--tenant names the tenant the source writes to');
    const body = {
      name: this.name,
      kind: this.kind,
      tenant: this.tenant,
      config: { path: this.sourcePath },
      enabled: !this.disabled,
      ...(this.poll !== undefined ? { poll_interval_s: Number(this.poll) } : {}),
    };
    const res = (await this.withClient((c) => c.request('PUT', '/v1/console/sources', { body }))).body as Source;
    this.emit(res, (s) => `source ${s.name} stored (${s.kind}, ${s.enabled ? 'enabled' : 'disabled'})`);
    return ExitCode.OK;
  }
}

export class SourcesRmCommand extends ClientCommand {
  static override paths = [['sources', 'rm']];
  static override usage = BaseCommand.Usage({
    category: 'Connectors',
    description: 'Remove a collector source from the roster',
    details: 'Needs `-y` when stdin is not a terminal.',
    examples: [['Remove', '$0 sources rm edge-logs -y']],
  });
  name = Option.String({ name: 'name' });
  yes = yesOption();
  async execute(): Promise<number> {
    await this.requireYes(this.yes, `remove source ${this.name} from the roster`);
    await this.withClient((c) => c.request('DELETE', '/v1/console/sources', { query: { name: this.name } }));
    this.emit({ name: this.name, deleted: true }, (o) => `source ${o.name} removed`);
    return ExitCode.OK;
  }
}
