import { Option } from 'clipanion';
import { BaseCommand, ClientCommand, yesOption } from '../../client/base-command.js';
import { idSegment } from '../auth/support.js';

/** `svc tenants rm`: DELETE /v1/system/orgs/{tenant_id} (superadmin). */
export class TenantsRmCommand extends ClientCommand {
  static override paths = [['tenants', 'rm']];

  static override usage = BaseCommand.Usage({
    category: 'Identity',
    description: 'Delete an organization (tenant) (DELETE /v1/system/orgs/{tenant_id}; superadmin)',
    details:
      'The tenant is soft-deleted so its audit chain stays verifiable; its members lose access at once. Needs `-y` when stdin is not ' +
      'a terminal.',
    examples: [['Delete a tenant', '$0 tenants rm 0190c8a2-0000-7000-8000-000000000001 -y']],
  });

  id = Option.String({ name: 'tenant-id' });
  yes = yesOption();

  async execute(): Promise<number> {
    const id = idSegment(this.id, 'tenant id');
    await this.requireYes(this.yes, `delete tenant ${id}`);
    await this.withClient((c) => c.request('DELETE', `/v1/system/orgs/${id}`));
    this.emit({ id, deleted: true }, (o) => `tenant ${o.id} deleted`);
    return 0;
  }
}
