import { Option } from 'clipanion';
import { BaseCommand, ClientCommand } from '../../client/base-command.js';
import { ExitCode } from '../../client/exit-codes.js';
import { readText } from '../hookpep/support.js';
import { CP, surfaceOption, validationText, type CpValidation } from './support.js';

/** `svc claude-policy dry-run <file>`: what publish would sign and change, recording nothing. */
export class ClaudePolicyDryRunCommand extends ClientCommand {
  static override paths = [['claude-policy', 'dry-run']];
  static override usage = BaseCommand.Usage({
    category: 'Governance',
    description:
      'Show what publishing a document would sign (sha256) and change against the published revision, storing nothing; exit 7 when ' +
      'it is not valid',
  });

  file = Option.String({ name: 'file', required: true });
  surface = surfaceOption();

  async execute(): Promise<number> {
    const content = await readText(this.file, this.context.stdin);
    const r = (await this.withClient((c) => c.request('POST', `${CP}/dry-run`, { body: { surface: this.surface, content } })))
      .body as CpValidation & { changes: Array<{ path: string; change: string }>; published_revision: number | null; unchanged: boolean };
    this.emit(r, validationText);
    return r.valid ? 0 : ExitCode.Degraded;
  }
}
