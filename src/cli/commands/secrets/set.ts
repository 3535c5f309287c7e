import { Option } from 'clipanion';
import { BaseCommand, ClientCommand } from '../../client/base-command.js';
import { CliUsageError } from '../../client/errors.js';
import { readSecret } from '../auth/support.js';

/** `svc secrets set NAME --value-file FILE|-`: PUT /v1/console/secrets. The value never comes from a flag. */
export class SecretsSetCommand extends ClientCommand {
  static override paths = [['secrets', 'set']];

  static override usage = BaseCommand.Usage({
    category: 'Console',
    description:
      'Create or replace a sealed secret (PUT /v1/console/secrets); the value is read from a file or stdin, never from the command line',
    details:
      'Configurations refer to it as `secret:<name>`. The server seals it with AES-256-GCM; no answer, log or bundle shows it again.',
    examples: [
      ['From stdin', 'printf %s "$TOKEN" | $0 secrets set splunk-hec --value-file -'],
      ['From a file', '$0 secrets set okta-client --value-file client-secret.txt'],
    ],
  });

  name = Option.String({ name: 'name' });
  valueFile = Option.String('--value-file', { description: 'Read the value from this file, or from stdin with - (default: stdin)' });

  async execute(): Promise<number> {
    const value = await readSecret('secret value', undefined, this.valueFile ?? '-', this.context.stdin);
    if (value === undefined) throw new CliUsageError('no value: pass --value-file FILE or pipe it on stdin');
    const body = (await this.withClient((c) => c.request('PUT', '/v1/console/secrets', { body: { name: this.name, value } }))).body as {
      name: string;
      hint: string;
      references: string[];
    };
    this.emit(
      body,
      (v) => `secret ${v.name} stored (hint ${v.hint ? `…${v.hint}` : 'none'}; referenced by ${v.references.join(', ') || 'nothing yet'})`,
    );
    return 0;
  }
}
