import { Option } from 'clipanion';
import { BaseCommand, ClientCommand } from '../../client/base-command.js';
import { CliUsageError } from '../../client/errors.js';
import { table } from '../auth/support.js';

type TraceRecord = {
  seq: number;
  occurred_at: string;
  actor: string;
  action: string;
  target_kind: string;
  target_id: string;
  hash: string;
};

/** `svc observability trace <trace-id>`: the ledger records of one trace, in order. */
export class ObservabilityTraceCommand extends ClientCommand {
  static override paths = [['observability', 'trace']];

  static override usage = BaseCommand.Usage({
    category: 'Observability',
    description: 'The ledger records of one trace, in order, with their integrity fields (GET /v1/m/observability/traces/{id})',
    examples: [['One trace', '$0 observability trace 4bf92f3577b34da6a3ce929d0e0e4736']],
  });

  id = Option.String({ name: 'trace-id', required: true });
  window = Option.String('--window', { description: 'Ledger records examined, counted back from the head (default 10000)' });

  async execute(): Promise<number> {
    if (!/^[0-9a-f]{32}$/.test(this.id)) throw new CliUsageError('the trace id is 32 lowercase hex digits');
    const body = (await this.withClient((c) => c.get(`/v1/m/observability/traces/${this.id}`, { query: { window: this.window } })))
      .body as { records: TraceRecord[] };
    this.emit(body, (b) =>
      table(b.records, [
        ['seq', (r) => r.seq],
        ['occurred at', (r) => r.occurred_at],
        ['actor', (r) => r.actor],
        ['action', (r) => r.action],
        ['target', (r) => `${r.target_kind}/${r.target_id}`],
        ['hash', (r) => r.hash.slice(0, 16)],
      ]),
    );
    return 0;
  }
}
