import { Option } from 'clipanion';
import { BaseCommand, ClientCommand } from '../../client/base-command.js';
import { table } from '../auth/support.js';

type TraceSummary = { trace_id: string; records: number; first_seen: string; last_seen: string; actions: string[] };

/** `svc observability traces`: traces the ledger records carry, most recent first. */
export class ObservabilityTracesCommand extends ClientCommand {
  static override paths = [['observability', 'traces']];

  static override usage = BaseCommand.Usage({
    category: 'Observability',
    description:
      'Traces the ledger records carry (requests that sent a W3C traceparent), most recent first (GET /v1/m/observability/traces)',
    examples: [['The latest traces', '$0 observability traces --limit 20']],
  });

  limit = Option.String('--limit', { description: 'Traces to show, 1..1000 (default 50)' });
  window = Option.String('--window', { description: 'Ledger records examined, counted back from the head (default 10000)' });

  async execute(): Promise<number> {
    const body = (await this.withClient((c) => c.get('/v1/m/observability/traces', { query: { limit: this.limit, window: this.window } })))
      .body as { items: TraceSummary[] };
    this.emit(body, (b) =>
      table(b.items, [
        ['trace id', (t) => t.trace_id],
        ['records', (t) => t.records],
        ['last seen', (t) => t.last_seen],
        ['actions', (t) => t.actions.join(',')],
      ]),
    );
    return 0;
  }
}
