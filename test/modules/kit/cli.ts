/** The kit module's `svc` command: a light file (no route code), as the CLI index would list it. */
import { BaseCommand, ClientCommand } from '../../../src/cli/client/base-command.js';

/** `svc kit notes`: the tenant's notes (GET /v1/m/kit/notes). */
export class KitNotesCommand extends ClientCommand {
  static override paths = [['kit', 'notes']];

  static override usage = BaseCommand.Usage({ category: 'Kit', description: "List the tenant's notes (GET /v1/m/kit/notes)" });

  async execute(): Promise<number> {
    const page = (await this.withClient((c) => c.get('/v1/m/kit/notes'))).body as { items: Array<{ id: string; text: string }> };
    this.emit(page, (p) => p.items.map((n) => `${n.id}  ${n.text}`).join('\n'));
    return 0;
  }
}

export const kitCommands = [KitNotesCommand];
