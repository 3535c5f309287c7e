/**
 * `svc sso get|set|rm|test`: the deployment's OpenID provider (`/v1/console/sso`, superadmin). `set`
 * replaces the whole configuration from a JSON or YAML file (role mapping and all), with flags for
 * the simple fields on top; the client secret is only ever a `secret:<name>` reference (`svc secrets set`).
 */
import { readFileSync } from 'node:fs';
import { Option } from 'clipanion';
import { parse } from 'yaml';
import { BaseCommand, ClientCommand, yesOption } from '../../client/base-command.js';
import { CliUsageError } from '../../client/errors.js';
import { ExitCode } from '../../client/exit-codes.js';
import { fields, table } from '../auth/support.js';

const SSO = '/v1/console/sso';

type SsoSettings = {
  issuer: string;
  client_id: string;
  client_secret_ref: string | null;
  scopes: string[];
  role_mapping: Array<{ claim: string; value: string; tenant: string; role: string }>;
  allowed_domains: string[];
  disable_password_login: boolean;
  aal3_acr_values: string[];
};
type SsoView = { configured: boolean; settings: SsoSettings | null; updated_at: string | null };

function ssoText(v: SsoView): string {
  if (!v.configured || v.settings === null) return 'single sign-on is not configured';
  const s = v.settings;
  const rules = table(s.role_mapping, [
    ['claim', (r) => r.claim],
    ['value', (r) => r.value],
    ['tenant', (r) => r.tenant],
    ['role', (r) => r.role],
  ]);
  const head = fields({
    issuer: s.issuer,
    client_id: s.client_id,
    client_secret_ref: s.client_secret_ref ?? '(public client)',
    scopes: s.scopes.join(' '),
    allowed_domains: s.allowed_domains.join(', ') || '(any)',
    disable_password_login: s.disable_password_login,
    aal3_acr_values: s.aal3_acr_values.join(' ') || '-',
    updated_at: v.updated_at,
  });
  return s.role_mapping.length === 0 ? `${head}\nrole_mapping: none (SSO users get no membership)` : `${head}\n\n${rules}`;
}

export class SsoGetCommand extends ClientCommand {
  static override paths = [['sso', 'get']];
  static override usage = BaseCommand.Usage({
    category: 'Console',
    description:
      `The OpenID provider used for single sign-on and its claim → tenant ` +
      `role rules (GET ${SSO}); the client secret only as a reference`,
  });

  async execute(): Promise<number> {
    const v = (await this.withClient((c) => c.get(SSO))).body as SsoView;
    this.emit(v, ssoText);
    return 0;
  }
}

export class SsoSetCommand extends ClientCommand {
  static override paths = [['sso', 'set']];
  static override usage = BaseCommand.Usage({
    category: 'Console',
    description:
      `Replace the SSO configuration (PUT ${SSO}): a JSON or YAML document with --file, the simple fields as flags (they win over the ` +
      `file); needs -y when not interactive`,
    details:
      'A `client_secret_ref` must name a stored secret (`svc secrets set NAME`), or the server refuses it. Fields not given take their ' +
      'defaults (scopes `openid email profile`, no rules), exactly as the API.',
    examples: [
      ['From a file', '$0 sso set --file sso.yaml -y'],
      [
        'Flags only',
        '$0 sso set --issuer https://idp.example.com --client-id svc --client-secret-ref secret:okta-client --allowed-domain ' +
          'example.com -y',
      ],
    ],
  });

  file = Option.String('--file', { description: 'JSON or YAML document with the configuration' });
  issuer = Option.String('--issuer', { description: 'The provider issuer URL' });
  clientId = Option.String('--client-id', { description: 'The client id registered at the provider' });
  secretRef = Option.String('--client-secret-ref', { description: 'secret:<name> of the client secret; "none" for a public client' });
  scopes = Option.Array('--scope', { description: 'A scope to request (repeat; openid is required)' });
  domains = Option.Array('--allowed-domain', { description: 'Accept only e-mail addresses of this domain (repeat)' });
  disablePassword = Option.Boolean('--disable-password-login', { description: 'Refuse password logins once SSO is set' });
  yes = yesOption();

  async execute(): Promise<number> {
    let body: Record<string, unknown> = {};
    if (this.file !== undefined) {
      let doc: unknown;
      try {
        doc = parse(readFileSync(this.file, 'utf8'));
      } catch (err) {
        throw new CliUsageError(`--file ${this.file}: ${(err as Error).message}`);
      }
      if (doc === null || typeof doc !== 'object' || Array.isArray(doc))
        throw new CliUsageError(`--file ${this.file}: expected ` + `a mapping of SSO settings`);
      body = doc as Record<string, unknown>;
    }
    if (this.issuer !== undefined) body['issuer'] = this.issuer;
    if (this.clientId !== undefined) body['client_id'] = this.clientId;
    if (this.secretRef !== undefined) body['client_secret_ref'] = this.secretRef === 'none' ? null : this.secretRef;
    if (this.scopes !== undefined) body['scopes'] = this.scopes;
    if (this.domains !== undefined) body['allowed_domains'] = this.domains;
    if (this.disablePassword !== undefined) body['disable_password_login'] = this.disablePassword;
    if (body['issuer'] === undefined || body['client_id'] === undefined)
      throw new CliUsageError('give --issuer and --client-id ' + '(or a --file holding them)');
    await this.requireYes(this.yes, `replace the single sign-on configuration (issuer ${String(body['issuer'])})`);
    const v = (await this.withClient((c) => c.request('PUT', SSO, { body }))).body as SsoView;
    this.emit(v, ssoText);
    return 0;
  }
}

export class SsoRmCommand extends ClientCommand {
  static override paths = [['sso', 'rm']];
  static override usage = BaseCommand.Usage({
    category: 'Console',
    description:
      `Remove the OpenID provider: SSO login stops at once, provisioned users keep their accounts (DELETE ${SSO}); exit 4 when none is ` +
      `set; needs -y when not interactive`,
  });
  yes = yesOption();

  async execute(): Promise<number> {
    await this.requireYes(this.yes, 'remove single sign-on (SSO logins stop at once)');
    await this.withClient((c) => c.request('DELETE', SSO));
    this.emit({ removed: true }, () => 'single sign-on removed');
    return 0;
  }
}

export class SsoTestCommand extends ClientCommand {
  static override paths = [['sso', 'test']];
  static override usage = BaseCommand.Usage({
    category: 'Console',
    description:
      `Check the configured provider now: discovery, issuer, PKCE S256, endpoints, JWKS, the client secret reference (POST ${SSO}/test); ` +
      `exit 7 when a step fails`,
  });

  async execute(): Promise<number> {
    const r = (await this.withClient((c) => c.request('POST', `${SSO}/test`))).body as {
      ok: boolean;
      steps: Array<{ step: string; ok: boolean; detail: string }>;
    };
    this.emit(r, (x) =>
      table(x.steps, [
        ['step', (s) => s.step],
        ['ok', (s) => (s.ok ? 'yes' : 'NO')],
        ['detail', (s) => s.detail],
      ]),
    );
    return r.ok ? 0 : ExitCode.Degraded;
  }
}
