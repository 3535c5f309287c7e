import { writeFile } from 'node:fs/promises';
import { Option } from 'clipanion';
import { BaseCommand, ClientCommand } from '../../client/base-command.js';
import { fields } from '../auth/support.js';
import { CP, surfaceOption } from './support.js';

type ArtifactView = {
  surface: string;
  revision: number;
  file: string;
  content: string;
  sha256: string;
  alg: string;
  signature: string;
  key_fingerprint: string;
  public_key_pem: string;
};

/**
 * `svc claude-policy artifact`: the signed artifact of a revision, its signature and the key, for installation and offline verification.
 */
export class ClaudePolicyArtifactCommand extends ClientCommand {
  static override paths = [['claude-policy', 'artifact']];
  static override usage = BaseCommand.Usage({
    category: 'Governance',
    description:
      'Fetch the signed artifact of a surface (default the published revision): the exact bytes, the raw Ed25519 signature and the ' +
      'public key, to install and to verify offline with openssl',
    details:
      'Verify offline: `openssl pkeyutl -verify -pubin -inkey policy-key.pem -rawin -in managed-settings.json -sigfile ' +
      'managed-settings.json.sig`.',
    examples: [
      [
        'Install with its signature',
        '$0 claude-policy artifact --out /etc/claude-code/managed-settings.json --sig-out /etc/claude-code/managed-settings.json.sig ' +
          '--key-out /etc/claude-code/policy-key.pem',
      ],
      ['Bytes to stdout', '$0 claude-policy artifact --surface managed-mcp --out -'],
    ],
  });

  surface = surfaceOption();
  revision = Option.String('--revision', { description: 'A revision number (default: the published one)' });
  out = Option.String('--out', { description: 'Write the artifact bytes to this file (or - for stdout) instead of printing a summary' });
  sigOut = Option.String('--sig-out', { description: 'Write the raw signature (binary, for openssl -sigfile) to this file' });
  keyOut = Option.String('--key-out', { description: 'Write the public key PEM to this file' });

  async execute(): Promise<number> {
    const a = (await this.withClient((c) => c.get(`${CP}/artifact`, { query: { surface: this.surface, revision: this.revision } })))
      .body as ArtifactView;
    if (this.sigOut) await writeFile(this.sigOut, Buffer.from(a.signature, 'base64'));
    if (this.keyOut) await writeFile(this.keyOut, a.public_key_pem);
    if (this.out === '-') {
      this.context.stdout.write(a.content);
      return 0;
    }
    if (this.out) await writeFile(this.out, a.content);
    this.emit(a, (v) =>
      fields({
        surface: v.surface,
        revision: v.revision,
        file: v.file,
        sha256: v.sha256,
        key_fingerprint: v.key_fingerprint,
        ...(this.out ? { written: this.out } : {}),
        ...(this.sigOut ? { signature: this.sigOut } : {}),
        ...(this.keyOut ? { key: this.keyOut } : {}),
      }),
    );
    return 0;
  }
}
