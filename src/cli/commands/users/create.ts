import { Option } from 'clipanion';
import * as t from 'typanion';
import { BaseCommand, ClientCommand } from '../../client/base-command.js';
import { CliUsageError } from '../../client/errors.js';
import { fields, readSecret } from '../auth/support.js';

/** `svc users create`: a user with a membership in the tenant. */
export class UsersCreateCommand extends ClientCommand {
  static override paths = [['users', 'create']];

  static override usage = BaseCommand.Usage({
    category: 'Identity',
    description: 'Create a user with a role in the tenant (POST /v1/users)',
    details:
      'Nobody grants a role above their own (403 `role_ceiling`). `--superadmin` needs a superadmin caller. The password must have ' +
      'at least 12 characters (400 `weak_password`).',
    examples: [['Create an editor', '$0 users create --email dev@example.com --password-file pw.txt --role editor']],
  });

  email = Option.String('--email', { required: true, description: 'E-mail (login name) of the new user' });
  password = Option.String('--password', { description: 'Initial password; prefer --password-file' });
  passwordFile = Option.String('--password-file', { description: 'Read the password from this file, or from stdin with -' });
  role = Option.String('--role', {
    description: 'Role in the tenant: viewer, editor, admin or owner (default: the server’s default)',
    validator: t.isEnum(['viewer', 'editor', 'admin', 'owner'] as const),
  });
  superadmin = Option.Boolean('--superadmin', false, { description: 'Make the user a superadmin (superadmin callers only)' });

  async execute(): Promise<number> {
    const password = await readSecret('password', this.password, this.passwordFile, this.context.stdin, this.context.stderr);
    if (password === undefined) throw new CliUsageError('no password: pass --password-file (or - for stdin) or --password');
    const body = {
      email: this.email,
      password,
      ...(this.role ? { role: this.role } : {}),
      ...(this.superadmin ? { superadmin: true } : {}),
    };
    const user = (await this.withClient((c) => c.request('POST', '/v1/users', { body }))).body as Record<string, unknown>;
    this.emit(user, fields);
    return 0;
  }
}
