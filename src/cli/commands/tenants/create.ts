import { Option } from 'clipanion';
import { BaseCommand, ClientCommand } from '../../client/base-command.js';
import { fields } from '../auth/support.js';

/** `svc tenants create`: POST /v1/system/orgs (superadmin). */
export class TenantsCreateCommand extends ClientCommand {
  static override paths = [['tenants', 'create']];

  static override usage = BaseCommand.Usage({
    category: 'Identity',
    description: 'Create an organization (tenant) (POST /v1/system/orgs; superadmin)',
    details: 'The new tenant starts its own audit chain with `org.create`.',
    examples: [['Create a tenant in a region', '$0 tenants create --name "Acme EU" --region eu-west']],
  });

  name = Option.String('--name', { required: true, description: 'Organization name' });
  region = Option.String('--region', {
    description: 'Data-residency region (lowercase letters, digits, -; default: the server’s default region)',
  });

  async execute(): Promise<number> {
    const body = { name: this.name, ...(this.region ? { region: this.region } : {}) };
    const org = (await this.withClient((c) => c.request('POST', '/v1/system/orgs', { body }))).body as Record<string, unknown>;
    this.emit(org, fields);
    return 0;
  }
}
