/** `svc` with the kit module composed in: `serve` starts the real server with its manifest; else the CLI with its commands. */
import { Cli } from 'clipanion';
import { ServeCommand } from '../../../src/cli/commands/serve.js';
import { main } from '../../../src/cli/main.js';
import type { ModuleManifest } from '../../../src/contract/manifest.js';
import { kitManifest } from './index.js';

class KitServeCommand extends ServeCommand {
  protected override readonly extraManifests: readonly ModuleManifest[] = [kitManifest];
}

const argv = process.argv.slice(2);
if (argv[0] === 'serve') {
  const cli = new Cli({ binaryName: 'svc' });
  cli.register(KitServeCommand);
  process.exitCode = await cli.run(argv);
} else {
  await main(argv, kitManifest.cli);
}
