import { BaseCommand, ClientCommand } from '../../client/base-command.js';
import { fields } from '../auth/support.js';

type Outcome = {
  collector: { items: number };
  reported: number;
  resolved: number;
  repeated: number;
  drift: { items: number; complete: boolean };
  escalation: { agents: number; paths: number; complete: boolean };
};

/** `svc security evaluate`: run svc's detectors and fold collector findings now. */
export class SecurityEvaluateCommand extends ClientCommand {
  static override paths = [['security', 'evaluate']];

  static override usage = BaseCommand.Usage({
    category: 'Findings',
    description:
      "Run svc's detectors (access-map drift, attack paths) and fold collector findings now (POST /v1/m/security/findings/evaluate); " +
      'audited',
    details:
      'Detector findings no longer seen are resolved, unless the run was cut short by its bounds (`complete: false`). The server ' +
      'also runs this after graph changes and on a timer.',
    examples: [['Evaluate now', '$0 security evaluate']],
  });

  async execute(): Promise<number> {
    const o = (await this.withClient((c) => c.request('POST', '/v1/m/security/findings/evaluate'))).body as Outcome;
    this.emit(o, (x) =>
      fields({
        reported: x.reported,
        resolved: x.resolved,
        repeated: x.repeated,
        collector_items: x.collector.items,
        drift_items: x.drift.items,
        drift_complete: x.drift.complete,
        escalation_paths: x.escalation.paths,
        escalation_complete: x.escalation.complete,
      }),
    );
    return 0;
  }
}
