import { BaseCommand, ClientCommand } from '../../../client/base-command.js';
import { table } from '../../auth/support.js';

type Summary = {
  nodes: { agents: number; sessions: number; identities: number; resources: number };
  edges: { total: number; permitted: number; observed: number; permitted_and_observed: number };
  drift: { unexpected: number; unused: number };
  attack_surface: { credential_accesses: number; control_writes: number };
  escalation: {
    agents_total: number;
    agents_evaluated: number;
    agents_with_paths: number;
    complete: boolean;
    top: Array<{ agent: { id: string; name: string }; targets: number; shortest: number; reachable_resources: number }>;
  };
};

/** `svc accessmap attack-paths summary`: the estate at a glance. */
export class AccessmapSummaryCommand extends ClientCommand {
  static override paths = [['accessmap', 'attack-paths', 'summary']];

  static override usage = BaseCommand.Usage({
    category: 'Access map',
    description:
      'Graph size, drift, attack surface and the agents with the most escalation targets (GET /v1/m/accessmap/attack-paths/summary)',
    examples: [['Summary', '$0 accessmap attack-paths summary']],
  });

  async execute(): Promise<number> {
    const s = (await this.withClient((c) => c.get('/v1/m/accessmap/attack-paths/summary'))).body as Summary;
    this.emit(s, (x) =>
      [
        `nodes:   ${x.nodes.agents} agents, ${x.nodes.sessions} sessions, ${x.nodes.identities} identities, ${x.nodes.resources} resources`,
        `edges:   ${x.edges.total} (${x.edges.permitted} permitted, ${x.edges.observed} observed, ${x.edges.permitted_and_observed} both)`,
        `drift:   ${x.drift.unexpected} unexpected, ${x.drift.unused} unused`,
        `surface: ${x.attack_surface.credential_accesses} credential accesses, ${x.attack_surface.control_writes} writes to ` +
          `config/code others read`,
        `escalation: ${x.escalation.agents_with_paths} of ${x.escalation.agents_evaluated} evaluated agents have ` +
          `paths${x.escalation.complete ? '' : ` (only ${x.escalation.agents_evaluated} of ${x.escalation.agents_total} evaluated)`}`,
        table(x.escalation.top, [
          ['agent', (t) => t.agent.name],
          ['targets', (t) => t.targets],
          ['shortest', (t) => t.shortest],
          ['reachable', (t) => t.reachable_resources],
        ]),
      ].join('\n'),
    );
    return 0;
  }
}
