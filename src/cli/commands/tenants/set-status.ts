import { Option } from 'clipanion';
import * as t from 'typanion';
import { BaseCommand, ClientCommand, yesOption } from '../../client/base-command.js';
import { fields, idSegment } from '../auth/support.js';

/** `svc tenants set-status`: PUT /v1/system/orgs/{tenant_id}/status (superadmin, AAL3). */
export class TenantsSetStatusCommand extends ClientCommand {
  static override paths = [['tenants', 'set-status']];

  static override usage = BaseCommand.Usage({
    category: 'Identity',
    description: 'Suspend or reactivate a tenant (PUT …/status; superadmin at AAL3)',
    details:
      'A suspended tenant refuses mutations with 423 `tenant_suspended`; reads and exports continue. Needs a session stepped up to ' +
      'AAL3 (else exit 3, `step_up_required`) and `-y` when stdin is not a terminal.',
    examples: [['Suspend a tenant', '$0 tenants set-status 0190c8a2-0000-7000-8000-000000000001 suspended -y']],
  });

  id = Option.String({ name: 'tenant-id' });
  status = Option.String({ name: 'status', validator: t.isEnum(['active', 'suspended'] as const) });
  yes = yesOption();

  async execute(): Promise<number> {
    const id = idSegment(this.id, 'tenant id');
    await this.requireYes(this.yes, `set the status of tenant ${id} to ${this.status}`);
    const org = (await this.withClient((c) => c.request('PUT', `/v1/system/orgs/${id}/status`, { body: { status: this.status } })))
      .body as Record<string, unknown>;
    this.emit(org, fields);
    return 0;
  }
}
