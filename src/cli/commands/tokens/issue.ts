import { Option } from 'clipanion';
import * as t from 'typanion';
import { BaseCommand, ClientCommand } from '../../client/base-command.js';
import { CliUsageError } from '../../client/errors.js';
import { fields } from '../auth/support.js';
import { normalizeRfc3339 } from '../../../contract/rfc3339.js';
import { parseTtl } from '../../../auth/token-ttl.js';

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
      A key expires after the server's default lifetime (\`SERVICE_TOKEN_DEFAULT_TTL\`, 90 days
      unless the operator changed it) unless \`--expires-at\` (any RFC 3339 date-time) or \`--ttl\`
      (\`30m\`, \`12h\`, \`90d\`, \`2w\`) says otherwise; only \`--ttl never\` makes one that never
      expires. An API key may issue keys only with the admin role or above, and never one that
      outlives itself.
      With \`-o json\` the secret is the \`token\` field; in text form it is the last line.
    `,
    examples: [
      ['A viewer key bound to one tenant', '$0 tokens issue --name dashboards --role viewer --bind-tenant 0190c8a2-…'],
      ['A key that expires at a given time', '$0 tokens issue --name ci --role editor --expires-at 2027-01-01T00:00:00Z'],
      ['A key for 30 days', '$0 tokens issue --name ci --role editor --ttl 30d'],
    ],
  });

  name = Option.String('--name', { required: true, description: 'Label of the key' });
  role = Option.String('--role', {
    description: 'Role ceiling: viewer, editor, admin or owner (default: your own)',
    validator: t.isEnum(['viewer', 'editor', 'admin', 'owner'] as const),
  });
  bindTenant = Option.String('--bind-tenant', { description: 'Bind the key to this one tenant (uuid)' });
  superadmin = Option.Boolean('--superadmin', false, { description: 'A superadmin key (superadmin callers only)' });
  expiresAt = Option.String('--expires-at', {
    description: "Expiry, any RFC 3339 date-time, e.g. 2027-01-01T00:00:00Z (default: the server's default lifetime)",
  });
  ttl = Option.String('--ttl', { description: 'Lifetime instead of --expires-at: 30m, 12h, 90d, 2w, or never' });

  async execute(): Promise<number> {
    if (this.expiresAt !== undefined && this.ttl !== undefined) throw new CliUsageError('give --expires-at or --ttl, not both');
    if (this.expiresAt !== undefined && normalizeRfc3339(this.expiresAt) === undefined) {
      throw new CliUsageError('--expires-at must be an RFC 3339 date-time, e.g. 2027-01-01T00:00:00Z or 2027-01-01T01:00:00+01:00');
    }
    if (this.ttl !== undefined && parseTtl(this.ttl) === undefined)
      throw new CliUsageError('--ttl must be a count and a unit (m, h, d, w), e.g. 90d, or never');
    const body = {
      name: this.name,
      ...(this.role ? { role: this.role } : {}),
      ...(this.bindTenant ? { tenant: this.bindTenant } : {}),
      ...(this.superadmin ? { superadmin: true } : {}),
      ...(this.expiresAt ? { expires_at: this.expiresAt } : {}),
      ...(this.ttl ? { ttl: this.ttl } : {}),
    };
    const issued = (await this.withClient((c) => c.request('POST', '/v1/tokens', { body }))).body as Record<string, unknown> & {
      token: string;
    };
    this.emit(issued, ({ token, ...rest }) => `${fields(rest)}\n\nsecret (shown once, store it now):\n${token}`);
    return 0;
  }
}
