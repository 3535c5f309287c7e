import { Option } from 'clipanion';
import { BaseCommand, ClientCommand } from '../../client/base-command.js';
import { table, type Page } from '../auth/support.js';

type TokenView = {
  id: string;
  name: string;
  user_id: string;
  role: string;
  tenant: string | null;
  superadmin: boolean;
  created_at: string;
  expires_at: string | null;
};

/** `svc tokens ls`: API keys you may manage (never their secrets). */
export class TokensLsCommand extends ClientCommand {
  static override paths = [['tokens', 'ls']];

  static override usage = BaseCommand.Usage({
    category: 'Identity',
    description: 'List the API keys you may manage (GET /v1/tokens); secrets are never shown again',
    details:
      'Your own keys, the keys bound to tenants you administer, or all keys for a superadmin. With `--tenant` only keys bound to ' +
      'that tenant.',
    examples: [['List keys', '$0 tokens ls -o json']],
  });

  limit = Option.String('--limit', { description: 'Page size, 1..1000 (default 50)' });
  cursor = Option.String('--cursor', { description: 'Continue after this cursor' });

  async execute(): Promise<number> {
    const page = (await this.withClient((c) => c.get('/v1/tokens', { query: { limit: this.limit, cursor: this.cursor } })))
      .body as Page<TokenView>;
    this.emit(
      page,
      (p) =>
        `${table(p.items, [
          ['id', (k) => k.id],
          ['name', (k) => k.name],
          ['role', (k) => k.role],
          ['tenant', (k) => k.tenant ?? 'any'],
          ['superadmin', (k) => k.superadmin],
          ['expires', (k) => k.expires_at ?? 'never'],
        ])}${p.has_more ? `\nmore: --cursor ${p.cursor}` : ''}`,
    );
    return 0;
  }
}
