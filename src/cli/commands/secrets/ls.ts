import { BaseCommand, ClientCommand } from '../../client/base-command.js';

interface SecretView {
  name: string;
  hint: string;
  updated_at: string;
  references: string[];
}

/** `svc secrets ls`: GET /v1/console/secrets. */
export class SecretsLsCommand extends ClientCommand {
  static override paths = [['secrets', 'ls']];

  static override usage = BaseCommand.Usage({
    category: 'Console',
    description: 'List the sealed secrets: name, hint (last 4 characters at most) and what references each; never a value',
    examples: [['List', '$0 secrets ls'], ['As JSON', '$0 secrets ls -o json']],
  });

  async execute(): Promise<number> {
    const body = (await this.withClient((c) => c.get('/v1/console/secrets'))).body as { items: SecretView[] };
    this.emit(body, (v) =>
      v.items.length === 0
        ? 'no secret stored'
        : [
            'NAME  HINT  UPDATED  REFERENCED BY',
            ...v.items.map((s) => `${s.name}  ${s.hint ? `…${s.hint}` : '-'}  ${s.updated_at}  ${s.references.join(',') || '-'}`),
          ].join('\n'),
    );
    return 0;
  }
}
