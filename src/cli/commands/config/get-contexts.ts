import { BaseCommand } from '../../client/base-command.js';
import { table } from '../auth/support.js';

type ContextRow = { name: string; current: boolean; server: string | null; tenant: string | null; credential: boolean };

/** `svc config get-contexts`: the saved contexts, without their secrets (kubectl's name). */
export class ConfigGetContextsCommand extends BaseCommand {
  static override paths = [['config', 'get-contexts']];

  static override usage = BaseCommand.Usage({
    category: 'Contexts',
    description: 'List the saved contexts: name, server, tenant, whether a credential is saved; * marks the current one',
    details:
      'Reads the config file (`$SERVICE_CONFIG`, else `~/.config/svc/config.yaml`); tokens are never printed. `-o json` gives ' +
      '`{current, path, items}`.',
    examples: [['All contexts', '$0 config get-contexts']],
  });

  async execute(): Promise<number> {
    const { configPath, readConfig } = await import('../../client/context.js');
    const path = configPath(this.context.env);
    const config = await readConfig(path);
    const current = config['current-context'] ?? null;
    const items: ContextRow[] = Object.keys(config.contexts)
      .sort()
      .map((name) => {
        const c = config.contexts[name] ?? {};
        return {
          name,
          current: name === current,
          server: c.server ?? null,
          tenant: c.tenant ?? null,
          credential: c.token !== undefined && c.token !== '',
        };
      });
    this.emit({ current, path, items }, (d) =>
      table(d.items, [
        ['current', (c) => (c.current ? '*' : '')],
        ['name', (c) => c.name],
        ['server', (c) => c.server],
        ['tenant', (c) => c.tenant],
        ['credential', (c) => c.credential],
      ]),
    );
    return 0;
  }
}
