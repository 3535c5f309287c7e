import { Option } from 'clipanion';
import { BaseCommand } from '../../client/base-command.js';
import { CliUsageError } from '../../client/errors.js';

/** `svc config use-context NAME`: make a saved context the current one. */
export class ConfigUseContextCommand extends BaseCommand {
  static override paths = [['config', 'use-context']];

  static override usage = BaseCommand.Usage({
    category: 'Contexts',
    description: 'Make a saved context the current one',
    details: 'An unknown name is a usage error (exit 2) that lists the saved names.',
    examples: [['Switch to the context "prod"', '$0 config use-context prod']],
  });

  name = Option.String({ name: 'name', required: true });

  async execute(): Promise<number> {
    const { configPath, readConfig, writeConfig } = await import('../../client/context.js');
    const path = configPath(this.context.env);
    const config = await readConfig(path);
    if (config.contexts[this.name] === undefined)
      throw new CliUsageError(
        `no context named "${this.name}" in ${path}; saved: ${Object.keys(config.contexts).sort().join(', ') || '(none)'}`,
      );
    config['current-context'] = this.name;
    await writeConfig(path, config);
    this.emit({ current: this.name }, (d) => `switched to context "${d.current}"`);
    return 0;
  }
}
