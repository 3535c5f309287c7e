import { Option } from 'clipanion';
import { BaseCommand, ClientCommand, yesOption } from '../../client/base-command.js';
import { CliUsageError } from '../../client/errors.js';
import { PDP, revisionFields, surfaceOption, type RevisionView } from './support.js';

/** `svc hookpep rollback --revision N`: make a stored revision active again. */
export class HookpepRollbackCommand extends ClientCommand {
  static override paths = [['hookpep', 'rollback']];
  static override usage = BaseCommand.Usage({
    category: 'Governance',
    description: 'Make an earlier policy revision active again (needs -y when not interactive)',
    examples: [['Back to revision 3', '$0 hookpep rollback --revision 3 -y']],
  });

  revision = Option.String('--revision', { required: true, description: 'The revision to activate' });
  surface = surfaceOption();
  yes = yesOption();

  async execute(): Promise<number> {
    const n = Number(this.revision);
    if (!Number.isSafeInteger(n) || n < 1) throw new CliUsageError('--revision takes a positive integer');
    await this.requireYes(this.yes, `make revision ${n} the active ${this.surface ?? 'hooks'} policy`);
    const r = (
      await this.withClient((c) =>
        c.request('POST', `${PDP}/rollback`, { body: { revision: n, ...(this.surface ? { surface: this.surface } : {}) } }),
      )
    ).body as { from: number | null; to: RevisionView };
    this.emit(r, (v) => `active revision: ${v.from ?? 'none'} → ${v.to.revision}\n${revisionFields(v.to)}`);
    return 0;
  }
}
