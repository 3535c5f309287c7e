import { Option } from 'clipanion';
import { BaseCommand, ClientCommand, yesOption } from '../../client/base-command.js';
import { idSegment } from '../auth/support.js';

/** `svc tokens revoke`: DELETE /v1/tokens/{id}. */
export class TokensRevokeCommand extends ClientCommand {
  static override paths = [['tokens', 'revoke']];

  static override usage = BaseCommand.Usage({
    category: 'Identity',
    description: 'Revoke an API key (DELETE /v1/tokens/{id}); it stops working at once',
    details: 'A key you cannot manage answers 404, exactly like one that does not exist. Needs `-y` when stdin is not a terminal.',
    examples: [['Revoke a key', '$0 tokens revoke 0190c8a2-0000-7000-8000-00000000000a -y']],
  });

  id = Option.String({ name: 'token-id' });
  yes = yesOption();

  async execute(): Promise<number> {
    const id = idSegment(this.id, 'token id');
    await this.requireYes(this.yes, `revoke API key ${id}`);
    await this.withClient((c) => c.request('DELETE', `/v1/tokens/${id}`));
    this.emit({ id, revoked: true }, (o) => `API key ${o.id} revoked`);
    return 0;
  }
}
