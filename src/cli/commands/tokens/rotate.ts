import { Option } from 'clipanion';
import { BaseCommand, ClientCommand, yesOption } from '../../client/base-command.js';
import { fields, idSegment } from '../auth/support.js';

/** `svc tokens rotate`: a replacement with the same specification; the old key dies in the same transaction. */
export class TokensRotateCommand extends ClientCommand {
  static override paths = [['tokens', 'rotate']];

  static override usage = BaseCommand.Usage({
    category: 'Identity',
    description: 'Rotate an API key (POST /v1/tokens/{id}/rotate): new secret printed once, old key revoked at once',
    details:
      'The replacement keeps name, role, tenant binding, superadmin flag and expiry. Anything still using the old secret gets 401 ' +
      'from now on. Needs `-y` when stdin is not a terminal.',
    examples: [['Rotate a key', '$0 tokens rotate 0190c8a2-0000-7000-8000-00000000000a -y']],
  });

  id = Option.String({ name: 'token-id' });
  yes = yesOption();

  async execute(): Promise<number> {
    const id = idSegment(this.id, 'token id');
    await this.requireYes(this.yes, `rotate API key ${id} (the old secret stops working at once)`);
    const issued = (await this.withClient((c) => c.request('POST', `/v1/tokens/${id}/rotate`))).body as Record<string, unknown> & {
      token: string;
    };
    this.emit(issued, ({ token, ...rest }) => `${fields(rest)}\n\nnew secret (shown once, store it now):\n${token}`);
    return 0;
  }
}
