import { Option } from 'clipanion';
import * as t from 'typanion';
import { BaseCommand, yesOption } from '../../client/base-command.js';
import { mkdir } from 'node:fs/promises';
import { CliError, CliUsageError } from '../../client/errors.js';
import { ExitCode } from '../../client/exit-codes.js';
import { defaultDataDir } from '../../../serve/config.js';
import { SIGNATURE_ALGORITHMS, type SignatureAlgorithm } from '../../../ledger/signers.js';

/** `svc keys rotate`: offline rotation of the audit signing key on the server's data directory. */
export class KeysRotateCommand extends BaseCommand {
  static override paths = [['keys', 'rotate']];

  static override usage = BaseCommand.Usage({
    category: 'Audit',
    description: 'Rotate the audit ledger signing key (offline: stop svc serve first)',
    details:
      `
      Runs on the server's data directory and store, with \`svc serve\` stopped (a running server would
      keep signing with the retired key): while a server holds the data directory (its
      \`serve.lock\`), the command refuses with exit 5 (\`data_dir_in_use\`), naming the server's pid. Mints a new key (algorithm of ` +
      `the current key unless
      \`--algorithm\`), retires the old one at each chain's current head (it stays published by
      \`GET /v1/audit/pubkey\` with that \`last_seq\`), and appends an \`audit.key.rotate\` record, signed
      by the new key, to every chain that has records. Start the server again afterwards.

      With \`--store postgres\` the keyring is the deployment's, in the database (docs/scale-out.md):
      give the current key (\`SERVICE_AUDIT_KEY_FILE\`) and the new one (\`--key-file\`); the rotation is
      recorded once for every replica, replicas still holding the old key refuse to sign from then on,
      and are restarted with the new key file.
    `,
    examples: [
      ['Rotate to a new Ed25519 key', '$0 keys rotate --data-dir /var/lib/svc --yes'],
      [
        'Rotate the key of a deployment of replicas',
        'SERVICE_AUDIT_KEY_FILE=/etc/svc/audit-key.pem $0 keys rotate --store postgres --dsn postgres://svc@db/svc --key-file ' +
          '/etc/svc/audit-key-2.pem --yes',
      ],
    ],
  });

  dataDir = Option.String('--data-dir', {
    description: 'data directory of the server (SERVICE_DATA_DIR; default $XDG_DATA_HOME/svc or ~/.local/share/svc)',
  });
  store = Option.String('--store', { description: 'sqlite (default) or postgres (SERVICE_STORE)' });
  dsn = Option.String('--dsn', { description: 'Postgres connection string for --store postgres (SERVICE_DSN)' });
  keyFile = Option.String('--key-file', {
    description:
      'Postgres (replicas): the new private key PEM (mode 0600) every replica will be given; default a key minted in the data directory',
  });
  algorithm = Option.String('--algorithm', {
    description: `algorithm of the new key: ${SIGNATURE_ALGORITHMS.join(', ')}`,
    validator: t.isEnum(SIGNATURE_ALGORITHMS),
  });
  yes = yesOption();

  async execute(): Promise<number> {
    const env = this.context.env;
    const dataDir = this.dataDir ?? (env.SERVICE_DATA_DIR || defaultDataDir(env));
    const backend = this.store ?? (env.SERVICE_STORE || 'sqlite');
    if (backend !== 'sqlite' && backend !== 'postgres')
      throw new CliUsageError(`--store must be sqlite or postgres, got ${JSON.stringify(backend)}`);
    if (this.keyFile !== undefined && backend !== 'postgres')
      throw new CliUsageError('--key-file is for --store postgres; on SQLite give the new key to svc serve as SERVICE_AUDIT_KEY_FILE');
    const dsn = this.dsn ?? (env.SERVICE_DSN || undefined);
    await this.requireYes(this.yes, 'rotate the audit signing key (svc serve must be stopped)');
    // A running server keeps the active key in memory and would go on signing with the retired one:
    // refuse while any svc serve holds the data directory (serve/data-dir-lock.ts), and keep it held
    // until the rotation is done, so no server starts in between.
    const { holdDataDirExclusive, DataDirBusyError } = await import('../../../serve/data-dir-lock.js');
    await mkdir(dataDir, { recursive: true, mode: 0o700 });
    let lock;
    try {
      lock = holdDataDirExclusive(dataDir);
    } catch (err) {
      if (err instanceof DataDirBusyError) throw new CliError(ExitCode.Conflict, 'data_dir_in_use', `refusing to rotate: ${err.message}`);
      throw err;
    }
    try {
      return await this.rotate(dataDir, backend, dsn);
    } finally {
      lock.release();
    }
  }

  private async rotate(dataDir: string, backend: 'sqlite' | 'postgres', dsn: string | undefined): Promise<number> {
    const env = this.context.env;
    const { openStore } = await import('../../../store/store.js');
    const { Keyring } = await import('../../../ledger/keyring.js');
    const { rotateSigningKey } = await import('../../../ledger/rotation.js');
    const store = await openStore({ backend, dataDir, ...(dsn ? { dsn } : {}) });
    try {
      await store.migrate();
      const keyring = await Keyring.open({ dataDir, env, store });
      let keyPem: string | undefined;
      if (this.keyFile !== undefined) {
        const { readPrivateKeyFile } = await import('../../../ledger/keyring.js');
        keyPem = await readPrivateKeyFile(this.keyFile);
      }
      const result = await rotateSigningKey(store, keyring, this.algorithm as SignatureAlgorithm | undefined, keyPem);
      this.emit(result, (r) =>
        [
          `rotated ${r.old_key_id} → ${r.new_key_id} (${r.algorithm})`,
          ...r.chains.map((c) => `  ${c.tenant}: old key ends at seq ${c.last_seq_old_key}, rotate record at seq ${c.rotate_seq}`),
        ].join('\n'),
      );
      return ExitCode.OK;
    } finally {
      await store.close();
    }
  }
}
