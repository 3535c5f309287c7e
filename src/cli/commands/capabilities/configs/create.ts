import { BaseCommand } from '../../../client/base-command.js';
import { CONFIGS, ConfigBodyCommand, configFields, type ConfigView } from '../support.js';

/** `svc capabilities configs create`: revision 1 of a configuration. */
export class CapabilitiesConfigsCreateCommand extends ConfigBodyCommand {
  static override paths = [['capabilities', 'configs', 'create']];
  static override usage = BaseCommand.Usage({
    category: 'Capabilities',
    description:
      'Create an MCP server or tool configuration (POST /v1/m/capabilities/configs); credentials only as secret:<name> references',
    examples: [
      [
        'An http MCP server',
        '$0 capabilities configs create --name github --kind mcp_server --transport http --url https://mcp.example/github --header ' +
          'Authorization=secret:github-mcp',
      ],
      ['From a file', '$0 capabilities configs create --file github.json'],
    ],
  });

  async execute(): Promise<number> {
    const body = await this.body();
    const c = (await this.withClient((cl) => cl.request('POST', CONFIGS, { body }))).body as ConfigView;
    this.emit(c, configFields);
    return 0;
  }
}
