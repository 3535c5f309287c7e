import { Option } from 'clipanion';
import { BaseCommand } from '../client/base-command.js';

/** `svc openapi [--beta]`: the build's contract, printed without a server (spec Versioning 3). */
export class OpenapiCommand extends BaseCommand {
  static override paths = [['openapi']];

  static override usage = BaseCommand.Usage({
    category: 'General',
    description: 'Print the OpenAPI 3.1 document of this build (stable core, or --beta module routes)',
    details: `
      Prints the same document the server serves at \`/openapi.json\` (or \`/openapi.beta.json\` with
      \`--beta\`), derived from the one route table, without contacting a server. The output is
      always pretty-printed JSON, whatever \`-o\` says, since the document is JSON either way.
    `,
    examples: [
      ['Stable core contract', '$0 openapi > openapi.json'],
      ['Beta module routes', '$0 openapi --beta'],
    ],
  });

  beta = Option.Boolean('--beta', false, { description: 'Print the beta module-route contract instead of the stable core' });

  async execute(): Promise<number> {
    // Loaded on demand: the route table pulls in every schema, which no other command needs.
    const { buildOpenApiDocument } = await import('../../contract/openapi.js');
    const { allRoutes } = await import('../../routes.js');
    const document = buildOpenApiDocument(this.beta ? 'beta' : 'stable', allRoutes());
    this.context.stdout.write(`${JSON.stringify(document, null, 2)}\n`);
    return 0;
  }
}
