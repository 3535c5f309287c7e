import { BaseCommand, ClientCommand } from '../../client/base-command.js';

/** `svc auth logout`: revoke the current session and forget it in the saved context. */
export class AuthLogoutCommand extends ClientCommand {
  static override paths = [['auth', 'logout']];

  static override usage = BaseCommand.Usage({
    category: 'Identity',
    description: 'Revoke the current session (POST /v1/auth/logout) and drop it from the saved context',
    details: `
      The session token stops working at once. When the token came from a saved context, it is
      removed from that context (server and trust anchors stay). API keys are not sessions:
      revoke them with \`svc tokens revoke\`.
    `,
    examples: [['Log out of the current context', '$0 auth logout']],
  });

  async execute(): Promise<number> {
    const settings = await this.settings();
    await this.withClient((c) => c.request('POST', '/v1/auth/logout'));
    let forgotten: string | undefined;
    if (settings.sources.token === 'context') {
      const { configPath, readConfig, writeConfig } = await import('../../client/context.js');
      const path = configPath(this.context.env);
      const config = await readConfig(path);
      const name = this.contextName ?? (this.context.env.SERVICE_CONTEXT || undefined) ?? config['current-context'];
      const ctx = name !== undefined ? config.contexts[name] : undefined;
      if (ctx && ctx.token === settings.token) {
        delete ctx.token;
        await writeConfig(path, config);
        forgotten = name;
      }
    }
    this.emit(
      { logged_out: true, ...(forgotten !== undefined ? { context: forgotten } : {}) },
      (o) => `logged out${o.context ? `; token removed from context "${o.context}"` : ''}`,
    );
    return 0;
  }
}
