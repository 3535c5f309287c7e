import { Option } from 'clipanion';
import { BaseCommand, ClientCommand } from '../../client/base-command.js';
import { ExitCode } from '../../client/exit-codes.js';
import { readText } from '../hookpep/support.js';
import { CP, surfaceOption, validationText, type CpValidation } from './support.js';

/** `svc claude-policy validate <file>`: check a managed settings document; exit 7 on errors. */
export class ClaudePolicyValidateCommand extends ClientCommand {
  static override paths = [['claude-policy', 'validate']];
  static override usage = BaseCommand.Usage({
    category: 'Governance',
    description:
      'Check a managed agent settings document on the server (shape, hook events, inline credentials) without storing it; exit 7 on errors',
    examples: [
      ['Check managed settings', '$0 claude-policy validate managed-settings.json'],
      ['Check the MCP servers file', '$0 claude-policy validate managed-mcp.json --surface managed-mcp'],
    ],
  });

  file = Option.String({ name: 'file', required: true });
  surface = surfaceOption();

  async execute(): Promise<number> {
    const content = await readText(this.file, this.context.stdin);
    const r = (await this.withClient((c) => c.request('POST', `${CP}/validate`, { body: { surface: this.surface, content } })))
      .body as CpValidation;
    this.emit(r, validationText);
    return r.valid ? 0 : ExitCode.Degraded;
  }
}
