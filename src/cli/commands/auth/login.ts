import { Option } from 'clipanion';
import { BaseCommand, ClientCommand } from '../../client/base-command.js';
import { CliUsageError } from '../../client/errors.js';
import { buildInfo } from '../../../build-info.js';
import { oneStdin, readSecret } from './support.js';
import { saveLoginContext } from './save-context.js';
import { renderWhoami, type Whoami } from './whoami.js';

/** `svc auth login`: validate a credential and save it as a named context (spec "Other stated client behaviour"). */
export class AuthLoginCommand extends ClientCommand {
  static override paths = [['auth', 'login']];

  static override usage = BaseCommand.Usage({
    category: 'Identity',
    description: 'Log in (e-mail and password, or an existing token) and save a named context',
    details: `
      With \`--email\` the password (from \`--password-file\`, \`-\` for stdin, or \`--password\`) is
      exchanged for a 12-hour session token (\`POST /v1/auth/login\`). Without it, the token given
      by \`--token\`/\`--token-file\`/\`SERVICE_TOKEN\` (a session or an API key) is validated.

      The credential is checked with \`GET /v1/auth/whoami\` and saved, with the server and its
      trust anchors (\`--ca-cert\`, \`--pin-sha256\`), as the context named by \`--name\`
      (default \`default\`), which becomes the current one. The tenant saved is \`--tenant\` (or
      \`SERVICE_TENANT\`), else the principal's only tenant as the server answered it; the current
      context's tenant is never carried into another context unless this login holds a grant in it.
    `,
    examples: [
      [
        'Log in with a password from a file',
        '$0 auth login --server https://cp.example.com:8443 --email me@example.com --password-file ~/.pw',
      ],
      ['Sign in through the OpenID provider (opens nothing: prints the URL)', '$0 auth login --server https://cp.example.com:8443 --sso'],
      [
        'Save an API key as the context "ci"',
        'printf %s "$KEY" | $0 auth login --server https://cp.example.com:8443 --token-file - --name ci',
      ],
    ],
  });

  email = Option.String('--email', { description: 'E-mail to log in with (otherwise the --token/--token-file credential is validated)' });
  password = Option.String('--password', { description: 'Password; prefer --password-file' });
  passwordFile = Option.String('--password-file', { description: 'Read the password from this file, or from stdin with -' });
  name = Option.String('--name', 'default', { description: 'Name of the context to save (default: default)' });
  sso = Option.Boolean('--sso', false, {
    description: "Sign in through the server's OpenID provider: prints the URL to open, receives the redirect on a loopback port",
  });

  async execute(): Promise<number> {
    oneStdin(this.passwordFile, this.tokenFile);
    const password =
      this.email !== undefined
        ? await readSecret('password', this.password, this.passwordFile, this.context.stdin, this.context.stderr)
        : undefined;
    if (this.email !== undefined && password === undefined)
      throw new CliUsageError('--email needs --password-file (or - for stdin) or --password');
    if (this.email === undefined && (this.password !== undefined || this.passwordFile !== undefined))
      throw new CliUsageError('a password needs --email');
    if (this.sso && this.email !== undefined) throw new CliUsageError('--sso and --email exclude each other');
    const { HttpClient } = await import('../../client/http-client.js');
    let settings = await this.settings();
    let token = settings.token;
    if (this.sso) {
      const { ssoLogin } = await import('./sso-flow.js');
      const anonymous = new HttpClient(
        { ...settings, token: undefined },
        { stderr: this.context.stderr, userAgent: `svc/${buildInfo().version}` },
      );
      try {
        token = await ssoLogin(anonymous, this.context.stderr);
      } finally {
        await anonymous.close();
      }
    } else if (this.email !== undefined) {
      // The password route takes no bearer: a stale saved token must not ride along.
      const anonymous = new HttpClient(
        { ...settings, token: undefined },
        { stderr: this.context.stderr, userAgent: `svc/${buildInfo().version}` },
      );
      try {
        token = ((await anonymous.request('POST', '/v1/auth/login', { body: { email: this.email, password } })).body as { token: string })
          .token;
      } finally {
        await anonymous.close();
      }
    }
    if (token === undefined)
      throw new CliUsageError('nothing to log in with: pass --email, or a token with --token-file/--token/SERVICE_TOKEN');
    // A tenant read from the saved context belongs to that context's login, perhaps on another
    // server: it is neither sent with this check nor saved, unless this login's grants hold it.
    const inherited = settings.sources.tenant === 'context' ? settings.tenant : undefined;
    settings = { ...settings, token, ...(inherited !== undefined ? { tenant: undefined } : {}) };
    const checker = new HttpClient(settings, { stderr: this.context.stderr, userAgent: `svc/${buildInfo().version}` });
    let who: Whoami;
    try {
      who = (await checker.get('/v1/auth/whoami')).body as Whoami;
    } finally {
      await checker.close();
    }
    const tenant =
      settings.tenant ?? (who.grants.length === 1 ? who.grants[0]?.tenant : who.grants.find((g) => g.tenant === inherited)?.tenant);
    const context = await saveLoginContext(this.context.env, this.name, settings, token, tenant);
    this.emit(
      { ...who, context, ...(tenant !== undefined ? { tenant } : {}) },
      (o) => `${renderWhoami(o)}\nsaved as context "${context}" (now current)`,
    );
    return 0;
  }
}
