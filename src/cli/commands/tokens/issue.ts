import { Option } from 'clipanion';
import * as t from 'typanion';
import { BaseCommand, ClientCommand } from '../../client/base-command.js';
import { CliUsageError } from '../../client/errors.js';
import { fields } from '../auth/support.js';

/** `svc tokens issue`: mint an API key; the secret is printed once (spec Authentication 6). */
export class TokensIssueCommand extends ClientCommand {
  static override paths = [['tokens', 'issue']];

  static override usage = BaseCommand.Usage({
    category: 'Identity',
    description: 'Issue an API key (POST /v1/tokens); the secret is printed once and never again',
    details: `
      The key acts with at most \`--role\` (never above your own role: 403 \`role_ceiling\`), in the
      tenant given by \`--bind-tenant\` only, or across your memberships when unbound.
      \`--superadmin\` keys can only be issued by superadmins. API keys never reach AAL3.
      With \`-o json\` the secret is the \`token\` field; in text form it is the last line.
    `,
    examples: [
      ['A viewer key bound to one tenant', '$0 tokens issue --name dashboards --role viewer --bind-tenant 0190c8a2-…'],
      ['A key that expires', '$0 tokens issue --name ci --role editor --expires-at 2027-01-01T00:00:00.000000000Z'],
    ],
  });

  name = Option.String('--name', { required: true, description: 'Label of the key' });
  role = Option.String('--role', { description: 'Role ceiling: viewer, editor, admin or owner (default: your own)', validator: t.isEnum(['viewer', 'editor', 'admin', 'owner'] as const) });
  bindTenant = Option.String('--bind-tenant', { description: 'Bind the key to this one tenant (uuid)' });
  superadmin = Option.Boolean('--superadmin', false, { description: 'A superadmin key (superadmin callers only)' });
  expiresAt = Option.String('--expires-at', { description: 'Expiry, RFC 3339 UTC with 9 fractional digits (default: never)' });

  async execute(): Promise<number> {
    if (this.expiresAt !== undefined && !/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{9}Z$/.test(this.expiresAt)) {
      throw new CliUsageError('--expires-at must look like 2027-01-01T00:00:00.000000000Z');
    }
    const body = {
      name: this.name,
      ...(this.role ? { role: this.role } : {}),
      ...(this.bindTenant ? { tenant: this.bindTenant } : {}),
      ...(this.superadmin ? { superadmin: true } : {}),
      ...(this.expiresAt ? { expires_at: this.expiresAt } : {}),
    };
    const issued = (await this.withClient((c) => c.request('POST', '/v1/tokens', { body }))).body as Record<string, unknown> & { token: string };
    this.emit(issued, ({ token, ...rest }) => `${fields(rest)}\n\nsecret (shown once, store it now):\n${token}`);
    return 0;
  }
}
