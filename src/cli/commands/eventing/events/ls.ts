import { Option } from 'clipanion';
import { BaseCommand, ClientCommand } from '../../../client/base-command.js';
import { table } from '../../auth/support.js';

type EventView = { id: string; type: string; subject: string; time: string; sequence: string };

/** `svc eventing events ls`: the event log from a sequence cursor. */
export class EventingEventsLsCommand extends ClientCommand {
  static override paths = [['eventing', 'events', 'ls']];
  static override usage = BaseCommand.Usage({
    category: 'Eventing',
    description: "The tenant's event log after a sequence (GET /v1/m/eventing/events), only the types your role may receive",
  });
  after = Option.String('--after', { description: 'Sequence cursor: events after it (default 0)' });
  type = Option.String('--type', { description: 'Only this event type' });
  limit = Option.String('--limit', { description: 'Page size, 1..1000 (default 50)' });

  async execute(): Promise<number> {
    const page = (
      await this.withClient((c) => c.get('/v1/m/eventing/events', { query: { after: this.after, type: this.type, limit: this.limit } }))
    ).body as { items: EventView[]; has_more: boolean; next_after: number };
    this.emit(
      page,
      (p) =>
        `${table(p.items, [
          ['seq', (e) => e.sequence],
          ['type', (e) => e.type],
          ['subject', (e) => e.subject],
          ['time', (e) => e.time],
          ['id', (e) => e.id],
        ])}${p.has_more ? `\nmore: --after ${p.next_after}` : ''}`,
    );
    return 0;
  }
}
