import { BaseCommand } from '../../client/base-command.js';
import { CliError } from '../../client/errors.js';
import { ExitCode } from '../../client/exit-codes.js';

/** `svc config current-context`: the name of the context client commands use by default. */
export class ConfigCurrentContextCommand extends BaseCommand {
  static override paths = [['config', 'current-context']];

  static override usage = BaseCommand.Usage({
    category: 'Contexts',
    description: 'Print the name of the current context',
    details: 'Exits 1 when none is set. `--context` and `SERVICE_CONTEXT` override it per command; this prints the saved default.',
    examples: [['Which context is in use', '$0 config current-context']],
  });

  async execute(): Promise<number> {
    const { configPath, readConfig } = await import('../../client/context.js');
    const path = configPath(this.context.env);
    const current = (await readConfig(path))['current-context'];
    if (current === undefined)
      throw new CliError(
        ExitCode.Err,
        'no_context',
        `no current context in ${path}; log in with svc auth login, or pick one with svc config use-context NAME`,
      );
    this.emit({ current }, (d) => d.current);
    return 0;
  }
}
