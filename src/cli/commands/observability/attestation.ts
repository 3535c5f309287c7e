import { BaseCommand, ClientCommand } from '../../client/base-command.js';
import { fields } from '../auth/support.js';

type Attestation = {
  version: string;
  commit: string;
  build_date: string;
  release: boolean;
  provenance: string;
  lockfile: { sha256: string } | null;
  installed_lockfile: { sha256: string } | null;
};

/** `svc observability attestation`: what is provably true about the running build. */
export class ObservabilityAttestationCommand extends ClientCommand {
  static override paths = [['observability', 'attestation']];

  static override usage = BaseCommand.Usage({
    category: 'Observability',
    description:
      'What is provably true about the running build: version, commit, build date, lockfile digests, release or not (GET ' +
      '/v1/m/observability/attestation)',
    examples: [['Show it', '$0 observability attestation']],
  });

  async execute(): Promise<number> {
    const a = (await this.withClient((c) => c.get('/v1/m/observability/attestation'))).body as Attestation;
    this.emit(a, (x) =>
      fields({
        version: x.version,
        commit: x.commit,
        build_date: x.build_date,
        release: x.release,
        provenance: x.provenance,
        lockfile_sha256: x.lockfile?.sha256 ?? null,
        installed_lockfile_sha256: x.installed_lockfile?.sha256 ?? null,
      }),
    );
    return 0;
  }
}
