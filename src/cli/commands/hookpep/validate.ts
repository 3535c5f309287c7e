import { Option } from 'clipanion';
import { BaseCommand, ClientCommand } from '../../client/base-command.js';
import { ExitCode } from '../../client/exit-codes.js';
import { fields } from '../auth/support.js';
import { PDP, readText } from './support.js';

/** `svc hookpep validate <file>`: parse and check a Cedar policy document; exit 7 when it does not compile. */
export class HookpepValidateCommand extends ClientCommand {
  static override paths = [['hookpep', 'validate']];
  static override usage = BaseCommand.Usage({
    category: 'Governance',
    description: 'Check a Cedar policy document on the server without storing it (exit 7 on errors)',
    examples: [['Check a file', '$0 hookpep validate policy.cedar']],
  });

  file = Option.String({ name: 'file', required: true });

  async execute(): Promise<number> {
    const content = await readText(this.file, this.context.stdin);
    const r = (await this.withClient((c) => c.request('POST', `${PDP}/validate`, { body: { content } }))).body as {
      valid: boolean;
      errors: string[];
      policies: Array<{ id: string }>;
    };
    this.emit(r, (v) =>
      fields({ valid: v.valid, policies: v.policies.map((p) => p.id), ...(v.errors.length ? { errors: v.errors } : {}) }),
    );
    return r.valid ? 0 : ExitCode.Degraded;
  }
}
