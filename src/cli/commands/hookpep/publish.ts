import { Option } from 'clipanion';
import { BaseCommand, ClientCommand, yesOption } from '../../client/base-command.js';
import { PDP, readText, revisionFields, surfaceOption, type RevisionView } from './support.js';

/** `svc hookpep publish <file>`: a new signed revision replacing the whole document, made active. */
export class HookpepPublishCommand extends ClientCommand {
  static override paths = [['hookpep', 'publish']];
  static override usage = BaseCommand.Usage({
    category: 'Governance',
    description:
      'Publish a Cedar policy document as a new signed revision and make it active (replaces the whole document; needs -y when not ' +
      'interactive)',
    examples: [['Publish', '$0 hookpep publish policy.cedar --note "block force pushes" -y']],
  });

  file = Option.String({ name: 'file', required: true });
  note = Option.String('--note', { description: 'Why (stored with the revision)' });
  surface = surfaceOption();
  yes = yesOption();

  async execute(): Promise<number> {
    const content = await readText(this.file, this.context.stdin);
    await this.requireYes(this.yes, `replace the active ${this.surface ?? 'hooks'} policy`);
    const r = (
      await this.withClient((c) =>
        c.request('POST', `${PDP}/publish`, {
          body: { content, ...(this.note ? { note: this.note } : {}), ...(this.surface ? { surface: this.surface } : {}) },
        }),
      )
    ).body as RevisionView;
    this.emit(r, revisionFields);
    return 0;
  }
}
