/**
 * TEMPLATE: the module's `svc` commands, in a light file the CLI index (src/cli/commands/index.ts)
 * lists with one line: it imports no route or server code, so `svc` starts as fast as before.
 */
import { BaseCommand, ClientCommand } from '../../cli/client/base-command.js';

/** `svc tmpl items`: the tenant's items (GET /v1/m/tmpl/items). */
export class TmplItemsCommand extends ClientCommand {
  static override paths = [['tmpl', 'items']];

  static override usage = BaseCommand.Usage({ category: 'Tmpl', description: "List the tenant's items (GET /v1/m/tmpl/items)" });

  async execute(): Promise<number> {
    const page = (await this.withClient((c) => c.get('/v1/m/tmpl/items'))).body as { items: Array<{ id: string; name: string }> };
    this.emit(page, (p) => p.items.map((i) => `${i.id}  ${i.name}`).join('\n'));
    return 0;
  }
}

export const tmplCommands = [TmplItemsCommand];
