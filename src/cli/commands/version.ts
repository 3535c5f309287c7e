import { BaseCommand } from '../client/base-command.js';
import { buildInfo } from '../../build-info.js';

/** The stable `svc version -o json` document. */
export type VersionInfo = {
  version: string;
  commit: string;
  build_date: string;
  os: string;
  arch: string;
  node_version: string;
  fips: boolean;
};

/** Collects what `svc version` reports (spec Versioning 4). */
export function versionInfo(): VersionInfo {
  // dist/build-info.json is read by the shared src/build-info.ts (also used by serve and OpenAPI).
  const build = buildInfo();
  return {
    version: build.version,
    commit: build.commit,
    build_date: build.buildDate,
    os: build.os,
    arch: build.arch,
    node_version: build.node,
    fips: build.fips,
  };
}

/** `svc version`: build and runtime identity. */
export class VersionCommand extends BaseCommand {
  static override paths = [['version']];

  static override usage = BaseCommand.Usage({
    category: 'General',
    description: 'Print the version, commit, build date, OS/arch, Node.js version and FIPS mode',
    details: `
      The version is the release tag the binary was built from, or \`dev\` for any build not made
      exactly from a tagged commit. A \`dev\` version is not proof of provenance.

      With \`-o json\` the output is one JSON object with the keys \`version\`, \`commit\`,
      \`build_date\`, \`os\`, \`arch\`, \`node_version\` and \`fips\`.
    `,
    examples: [
      ['Show the version', '$0 version'],
      ['Machine-readable', '$0 version -o json'],
    ],
  });

  async execute(): Promise<number> {
    this.emit(versionInfo(), (v) =>
      [
        `version:    ${v.version}`,
        `commit:     ${v.commit}`,
        `built:      ${v.build_date}`,
        `os/arch:    ${v.os}/${v.arch}`,
        `node:       ${v.node_version}`,
        `fips:       ${v.fips ? 'enabled' : 'disabled'}`,
      ].join('\n'),
    );
    return 0;
  }
}
