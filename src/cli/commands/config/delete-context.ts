import { Option } from 'clipanion';
import { BaseCommand, yesOption } from '../../client/base-command.js';
import { CliUsageError } from '../../client/errors.js';

/** `svc config delete-context NAME`: forget a saved context and its credential (nothing is revoked). */
export class ConfigDeleteContextCommand extends BaseCommand {
  static override paths = [['config', 'delete-context']];

  static override usage = BaseCommand.Usage({
    category: 'Contexts',
    description: 'Delete a saved context and the credential saved in it (the token itself is not revoked)',
    details:
      'Deleting the current context leaves no current context. Revoke a session first with `svc auth logout` if it should stop ' +
      'working. Needs `-y` when stdin is not a terminal.',
    examples: [['Forget the context "demo"', '$0 config delete-context demo -y']],
  });

  name = Option.String({ name: 'name', required: true });
  yes = yesOption();

  async execute(): Promise<number> {
    const { configPath, readConfig, writeConfig } = await import('../../client/context.js');
    const path = configPath(this.context.env);
    const config = await readConfig(path);
    if (config.contexts[this.name] === undefined) throw new CliUsageError(`no context named "${this.name}" in ${path}`);
    await this.requireYes(this.yes, `delete context "${this.name}" and its saved credential`);
    delete config.contexts[this.name];
    const wasCurrent = config['current-context'] === this.name;
    if (wasCurrent) delete config['current-context'];
    await writeConfig(path, config);
    this.emit(
      { deleted: this.name, current: config['current-context'] ?? null },
      (d) => `deleted context "${d.deleted}"${wasCurrent ? '; no current context now' : ''}`,
    );
    return 0;
  }
}
