import { BaseCommand, ClientCommand } from '../../client/base-command.js';
import { fields } from './support.js';

/** The `GET /v1/auth/whoami` document (DECISIONS.md "Setup, credentials, sessions"). */
export type Whoami = {
  kind: 'user' | 'token';
  user_id: string;
  actor: string;
  superadmin: boolean;
  aal?: number;
  amr?: string[];
  grants: Array<{ tenant: string; role: string; permissions: string[] }>;
};

/** Text form of a whoami document. */
export function renderWhoami(w: Whoami): string {
  const head = fields({
    kind: w.kind,
    actor: w.actor,
    user_id: w.user_id,
    superadmin: w.superadmin,
    ...(w.aal !== undefined ? { aal: w.aal } : {}),
    ...(w.amr ? { amr: w.amr } : {}),
  });
  const grants = w.grants.map((g) => `  ${g.tenant}  ${g.role}`);
  return [head, `grants:${grants.length === 0 ? ' (none)' : ''}`, ...grants].join('\n');
}

/** `svc auth whoami`: who the current credential is, its assurance level and grants. */
export class AuthWhoamiCommand extends ClientCommand {
  static override paths = [['auth', 'whoami']];

  static override usage = BaseCommand.Usage({
    category: 'Identity',
    description: 'Show the principal behind the current credential (GET /v1/auth/whoami)',
    details: `
      Prints the kind (user session or API key), the ledger actor, the superadmin flag, the
      assurance level of a session (1, or 3 for 15 minutes after a WebAuthn step-up) and the
      role and permissions held in each tenant. Exit 3 when the credential is rejected.
    `,
    examples: [['As JSON', '$0 auth whoami -o json']],
  });

  async execute(): Promise<number> {
    const who = (await this.withClient((c) => c.get('/v1/auth/whoami'))).body as Whoami;
    this.emit(who, renderWhoami);
    return 0;
  }
}
