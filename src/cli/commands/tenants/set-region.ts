import { Option } from 'clipanion';
import { BaseCommand, ClientCommand, yesOption } from '../../client/base-command.js';
import { fields, idSegment } from '../auth/support.js';

/** `svc tenants set-region`: PUT /v1/system/orgs/{tenant_id}/region (superadmin, AAL3). */
export class TenantsSetRegionCommand extends ClientCommand {
  static override paths = [['tenants', 'set-region']];

  static override usage = BaseCommand.Usage({
    category: 'Identity',
    description: 'Set the data-residency region of a tenant (PUT …/region; superadmin at AAL3)',
    details:
      'Replaces the region. The session must be stepped up to AAL3 with a WebAuthn authenticator (the /ui/step-up page of the ' +
      'server) within the last 15 minutes, else 403 `step_up_required` (exit 3). API keys never qualify. Needs `-y` when stdin is ' +
      'not a terminal.',
    examples: [['Move a tenant to eu-west', '$0 tenants set-region 0190c8a2-0000-7000-8000-000000000001 eu-west -y']],
  });

  id = Option.String({ name: 'tenant-id' });
  region = Option.String({ name: 'region' });
  yes = yesOption();

  async execute(): Promise<number> {
    const id = idSegment(this.id, 'tenant id');
    await this.requireYes(this.yes, `set the region of tenant ${id} to ${this.region}`);
    const org = (await this.withClient((c) => c.request('PUT', `/v1/system/orgs/${id}/region`, { body: { region: this.region } })))
      .body as Record<string, unknown>;
    this.emit(org, fields);
    return 0;
  }
}
