import { Option } from 'clipanion';
import { BaseCommand, ClientCommand } from '../../../client/base-command.js';
import type { Page } from '../../auth/support.js';
import { CONFIGS, configTable, type ConfigView } from '../support.js';

/** `svc capabilities configs ls`. */
export class CapabilitiesConfigsLsCommand extends ClientCommand {
  static override paths = [['capabilities', 'configs', 'ls']];
  static override usage = BaseCommand.Usage({
    category: 'Capabilities',
    description: 'List MCP server and tool configurations (GET /v1/m/capabilities/configs)',
  });

  kind = Option.String('--kind', { description: 'mcp_server or tool' });
  limit = Option.String('--limit', { description: 'Page size (1-1000, default 50)' });
  cursor = Option.String('--cursor', { description: 'Continue after this cursor' });

  async execute(): Promise<number> {
    const page = (await this.withClient((c) => c.get(CONFIGS, { query: { kind: this.kind, limit: this.limit, cursor: this.cursor } })))
      .body as Page<ConfigView>;
    this.emit(page, (p) => configTable(p.items) + (p.has_more ? `\nmore: --cursor ${p.cursor}` : ''));
    return 0;
  }
}
