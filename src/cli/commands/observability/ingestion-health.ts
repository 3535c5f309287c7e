import { Option } from 'clipanion';
import { BaseCommand, ClientCommand } from '../../client/base-command.js';
import { table } from '../auth/support.js';

type Flow = { what: string; count: number; last_seen: string | null };
type Standard = {
  standard: string;
  pinned_version: string;
  status: string;
  check: { verified: boolean; detail: string } | null;
  inbound: Flow[];
  outbound: Flow[];
  note?: string;
};

/** `svc observability ingestion-health`: per pinned standard, flows in and out and the verified version. */
export class ObservabilityIngestionHealthCommand extends ClientCommand {
  static override paths = [['observability', 'ingestion-health']];

  static override usage = BaseCommand.Usage({
    category: 'Observability',
    description:
      'Per pinned interop standard: what flows in and out, and the pinned version verified by a check the server runs now (GET ' +
      '/v1/m/observability/ingestion-health)',
    examples: [
      ['Show it', '$0 observability ingestion-health'],
      ['As JSON', '$0 observability ingestion-health -o json'],
    ],
  });

  window = Option.String('--window', { description: 'Ledger records examined, counted back from the head (default 10000)' });

  async execute(): Promise<number> {
    const body = (await this.withClient((c) => c.get('/v1/m/observability/ingestion-health', { query: { window: this.window } }))).body as {
      standards: Standard[];
    };
    const sum = (flows: Flow[]) => flows.reduce((n, f) => n + f.count, 0);
    this.emit(body, (b) =>
      table(b.standards, [
        ['standard', (s) => s.standard],
        ['pinned', (s) => s.pinned_version],
        ['status', (s) => s.status],
        ['in', (s) => sum(s.inbound)],
        ['out', (s) => sum(s.outbound)],
      ]),
    );
    return 0;
  }
}
