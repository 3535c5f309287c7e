import { BaseCommand, ClientCommand } from '../../client/base-command.js';

interface Setting {
  name: string;
  value: string | number | boolean | null;
  source: string;
  redacted: boolean;
}

/** `svc config effective`: GET /v1/console/config/effective. */
export class ConfigEffectiveCommand extends ClientCommand {
  static override paths = [['config', 'effective']];

  static override usage = BaseCommand.Usage({
    category: 'Console',
    description: "The server's effective configuration: every setting, its value and source (flag, env, default, stored); secrets redacted",
    examples: [['Show', '$0 config effective'], ['As JSON', '$0 config effective -o json']],
  });

  async execute(): Promise<number> {
    const body = (await this.withClient((c) => c.get('/v1/console/config/effective'))).body as { settings: Setting[] };
    const width = Math.max(...body.settings.map((s) => s.name.length), 4);
    this.emit(body, (v) =>
      v.settings
        .map(
          (s) =>
            `${s.name.padEnd(width)}  ${String(s.source).padEnd(7)}  ` +
            `${s.value === null ? '-' : String(s.value)}${s.redacted ? '  (redacted)' : ''}`,
        )
        .join('\n'),
    );
    return 0;
  }
}
