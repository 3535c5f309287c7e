import { Option } from 'clipanion';
import { BaseCommand, ClientCommand } from '../../client/base-command.js';
import { CliUsageError } from '../../client/errors.js';
import { oneStdin, readSecret } from './support.js';
import { saveLoginContext } from './save-context.js';

type SetupResult = { user: { id: string; email: string }; organization: { id: string; name: string } };

/** `svc auth bootstrap`: redeem the one-time setup token (spec Authentication 3). */
export class AuthBootstrapCommand extends ClientCommand {
  static override paths = [['auth', 'bootstrap']];

  static override usage = BaseCommand.Usage({
    category: 'Identity',
    description: 'Redeem the one-time setup token: create the first organization and its superadmin',
    details: `
      At first boot \`svc serve\` prints a one-time setup token (\`svcst_…\`) on its standard output.
      This command redeems it with \`POST /v1/setup\`, creating the first organization and its
      superadmin owner. The token is single use; once a user exists the server answers 409.

      With \`--save-context\` (or \`--save-context=<name>\`) the new administrator is also logged in and the session is saved as
      a named context (default name \`default\`), so later commands need no flags.
      Read secrets from files (or \`-\` for stdin) rather than the command line, where other
      local users can see them.
    `,
    examples: [
      [
        'Bootstrap with the token printed at first boot (pasted on stdin)',
        '$0 auth bootstrap --server https://127.0.0.1:8443 --pin-sha256 <pin_sha256 from the serve log> --setup-token-file - --email ' +
          'admin@example.com --password-file pw.txt --save-context',
      ],
      [
        'Name the organization',
        '$0 auth bootstrap --setup-token-file token.txt --email admin@example.com --password-file pw.txt --organization "Acme"',
      ],
    ],
  });

  setupToken = Option.String('--setup-token', { description: 'The one-time setup token (svcst_…); prefer --setup-token-file' });
  setupTokenFile = Option.String('--setup-token-file', { description: 'Read the setup token from this file, or from stdin with -' });
  email = Option.String('--email', { description: 'E-mail (login name) of the first administrator', required: true });
  password = Option.String('--password', {
    description: 'Password of the first administrator (at least 12 characters); prefer --password-file',
  });
  passwordFile = Option.String('--password-file', { description: 'Read the password from this file, or from stdin with -' });
  organization = Option.String('--organization', {
    description: 'Name of the first organization (default: the server’s default organization name)',
  });
  saveContext = Option.String('--save-context', {
    tolerateBoolean: true,
    description: 'Log in and save the session as a named context: --save-context or --save-context=<name> (default name: default)',
  });

  async execute(): Promise<number> {
    oneStdin(this.setupTokenFile, this.passwordFile);
    const token = await readSecret('setup token', this.setupToken, this.setupTokenFile, this.context.stdin, this.context.stderr);
    if (token === undefined) throw new CliUsageError('no setup token: pass --setup-token-file (or - for stdin) or --setup-token');
    const password = await readSecret('password', this.password, this.passwordFile, this.context.stdin, this.context.stderr);
    if (password === undefined) throw new CliUsageError('no password: pass --password-file (or - for stdin) or --password');
    const settings = await this.settings();
    const out = await this.withClient(async (client) => {
      const body = {
        token: token.trim(),
        email: this.email,
        password,
        ...(this.organization !== undefined ? { organization: this.organization } : {}),
      };
      const setup = (await client.request('POST', '/v1/setup', { body })).body as SetupResult;
      let context: string | undefined;
      if (this.saveContext !== undefined && this.saveContext !== false) {
        const name = typeof this.saveContext === 'string' ? this.saveContext : 'default';
        const login = (await client.request('POST', '/v1/auth/login', { body: { email: this.email, password } })).body as { token: string };
        context = await saveLoginContext(this.context.env, name, settings, login.token, setup.organization.id);
      }
      return { ...setup, ...(context !== undefined ? { context } : {}) };
    });
    this.emit(out, (o) =>
      [
        `organization ${o.organization.name} (${o.organization.id}) created`,
        `superadmin ${o.user.email} (${o.user.id}) created`,
        ...(o.context
          ? [`logged in; saved as context "${o.context}"`]
          : [`next: svc auth login --email ${o.user.email} --password-file <file>`]),
      ].join('\n'),
    );
    return 0;
  }
}
