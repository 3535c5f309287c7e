import { Option } from 'clipanion';
import { BaseCommand, ClientCommand, yesOption } from '../../client/base-command.js';
import { readText } from '../hookpep/support.js';
import { CP, cpRevisionFields, surfaceOption, type CpRevisionView } from './support.js';

/** `svc claude-policy publish <file>`: a new signed revision of a surface (the whole document), published. */
export class ClaudePolicyPublishCommand extends ClientCommand {
  static override paths = [['claude-policy', 'publish']];
  static override usage = BaseCommand.Usage({
    category: 'Governance',
    description:
      'Publish a managed agent settings document as a new signed revision (replaces the whole document; refused with inline ' +
      'credentials; needs -y when not interactive)',
    examples: [['Publish', '$0 claude-policy publish managed-settings.json --note "deny curl" -y']],
  });

  file = Option.String({ name: 'file', required: true });
  surface = surfaceOption();
  note = Option.String('--note', { description: 'Why (stored with the revision)' });
  yes = yesOption();

  async execute(): Promise<number> {
    const content = await readText(this.file, this.context.stdin);
    await this.requireYes(this.yes, `replace the published ${this.surface} document`);
    const r = (
      await this.withClient((c) =>
        c.request('POST', `${CP}/publish`, { body: { surface: this.surface, content, ...(this.note ? { note: this.note } : {}) } }),
      )
    ).body as CpRevisionView;
    this.emit(r, cpRevisionFields);
    return 0;
  }
}
