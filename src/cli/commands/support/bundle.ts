import { createHash, randomBytes } from 'node:crypto';
import { open, rename, unlink } from 'node:fs/promises';
import { basename, dirname, join, resolve } from 'node:path';
import { Writable } from 'node:stream';
import { Option } from 'clipanion';
import { BaseCommand, ClientCommand } from '../../client/base-command.js';

/** `svc support bundle --out FILE`: POST /v1/console/support-bundle, streamed to FILE (0600, atomic). */
export class SupportBundleCommand extends ClientCommand {
  static override paths = [['support', 'bundle']];

  static override usage = BaseCommand.Usage({
    category: 'Console',
    description:
      'Download a support bundle (.tar.gz): version, redacted config, health, migrations, store statistics, ledger heads and verify ' +
      'summary',
    details: `
      The bundle carries no secret, token, password hash, key material or personal data
      (docs/support.md lists every file). The server asks for a session stepped up to AAL3
      (WebAuthn); the file is written 0600 and appears only once complete.
    `,
    examples: [['Download', '$0 support bundle --out svc-support.tar.gz']],
  });

  out = Option.String('--out', { required: true, description: 'Where to write the .tar.gz' });

  protected override defaultTimeoutMs = 120_000;

  async execute(): Promise<number> {
    const target = resolve(this.out);
    const temp = join(dirname(target), `.${basename(target)}.${randomBytes(6).toString('hex')}.part`);
    const file = await open(temp, 'wx', 0o600);
    const hash = createHash('sha256');
    let bytes = 0;
    const sink = new Writable({
      write(chunk: Buffer, _enc, cb) {
        hash.update(chunk);
        bytes += chunk.length;
        file.write(chunk).then(() => cb(), cb);
      },
    });
    try {
      await this.withClient((c) => c.download('/v1/console/support-bundle', sink, { method: 'POST' }));
      await file.sync();
      await file.close();
      await rename(temp, target);
    } catch (err) {
      await file.close().catch(() => undefined);
      await unlink(temp).catch(() => undefined);
      throw err;
    }
    this.emit(
      { path: target, bytes, sha256: hash.digest('hex') },
      (v) => `support bundle written to ${v.path} (${v.bytes} bytes, sha256 ${v.sha256})`,
    );
    return 0;
  }
}
