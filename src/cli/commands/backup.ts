import { Option } from 'clipanion';
import { BaseCommand } from '../client/base-command.js';
import { CliError, CliUsageError } from '../client/errors.js';
import { ExitCode } from '../client/exit-codes.js';
import { defaultDataDir } from '../../serve/config.js';

/** `svc backup`: a copy of the SQLite data directory as of one instant, online (store/sqlite/backup.ts). */
export class BackupCommand extends BaseCommand {
  static override paths = [['backup']];

  static override usage = BaseCommand.Usage({
    category: 'Server',
    description: 'Copy the SQLite data directory as of one instant, while svc serve runs',
    details: `
      Copies svc.db and the access map's edge file (svc-edges.db) as of one instant, with the audit
      signing keys (\`audit-keys/\`) and the TLS certificate (\`tls/\`), into DEST, a directory that
      must not already hold a database (created 0700; the copies are 0600). \`svc serve\` may run
      meanwhile: its writes wait a few milliseconds while both files' snapshots are taken, then go on
      during the copy. Restore: stop the service, put DEST's contents in the data directory (with no
      \`-wal\`/\`-shm\` files of the old database left beside them), start it. PostgreSQL: use
      \`pg_dump\` (docs/storage.md "Backups"). Exit 1 when the data directory holds no store or DEST
      is in use.
    `,
    examples: [['Back up the default data directory', '$0 backup /backups/svc-2026-11-27']],
  });

  dataDir = Option.String('--data-dir', {
    description: 'data directory of the server (SERVICE_DATA_DIR; default $XDG_DATA_HOME/svc or ~/.local/share/svc)',
  });
  dest = Option.String({ name: 'dest' });

  async execute(): Promise<number> {
    const env = this.context.env;
    if ((env.SERVICE_STORE || 'sqlite') !== 'sqlite')
      throw new CliUsageError('svc backup copies the SQLite store; for PostgreSQL use pg_dump (docs/storage.md "Backups")');
    const dataDir = this.dataDir ?? (env.SERVICE_DATA_DIR || defaultDataDir(env));
    const { backupSqliteDataDir } = await import('../../store/sqlite/backup.js');
    const { StoreError } = await import('../../store/store-error.js');
    try {
      const r = await backupSqliteDataDir(dataDir, this.dest);
      this.emit(r, (x) =>
        [
          `backed up ${dataDir} into ${x.dir} in ${x.ms} ms (svc.db held for ${x.lock_ms} ms)`,
          `  recent level: ${x.recent_level_rows} rows waiting, edges merged up to seq ${x.merged_up_to}`,
          ...x.files.map((f) => `  ${f.file}  ${f.bytes} bytes`),
        ].join('\n'),
      );
      return ExitCode.OK;
    } catch (err) {
      if (err instanceof StoreError) throw new CliError(ExitCode.Err, err.code, err.message);
      throw err;
    }
  }
}
