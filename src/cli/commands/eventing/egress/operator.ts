/**
 * `svc eventing egress actuate` and `svc eventing fence status|arm|verify`: operator commands that
 * open the store directly (like `svc keys rotate`), not the API: the app role may only read the
 * egress tables (migration 30), so the rollout and the fence are changed with the store's owner
 * credentials (SQLite: the data directory; Postgres: `--dsn`, the migrating user). They import the
 * module's egress.ts, not its index.ts: the manifest lists these commands, so that would be a circle.
 */
import { Option } from 'clipanion';
import * as t from 'typanion';
import { BaseCommand, yesOption } from '../../../client/base-command.js';
import { CliUsageError } from '../../../client/errors.js';
import { ExitCode } from '../../../client/exit-codes.js';
import { defaultDataDir } from '../../../../serve/config.js';
import type { Store } from '../../../../store/store-types.js';

/** What every operator egress command shares: where the store is. */
abstract class EgressOperatorCommand extends BaseCommand {
  dataDir = Option.String('--data-dir', {
    description: 'data directory of the server (SERVICE_DATA_DIR; default $XDG_DATA_HOME/svc or ~/.local/share/svc)',
  });
  store = Option.String('--store', { description: 'sqlite (default) or postgres (SERVICE_STORE)' });
  dsn = Option.String('--dsn', {
    description: 'Postgres connection string of the owner (migrating) user for --store postgres (SERVICE_DSN)',
  });

  protected where(): { dataDir: string; backend: 'sqlite' | 'postgres'; dsn: string | undefined } {
    const env = this.context.env;
    const backend = this.store ?? (env.SERVICE_STORE || 'sqlite');
    if (backend !== 'sqlite' && backend !== 'postgres')
      throw new CliUsageError(`--store must be sqlite or postgres, got ${JSON.stringify(backend)}`);
    const dsn = this.dsn ?? (env.SERVICE_DSN || undefined);
    if (backend === 'postgres' && !dsn) throw new CliUsageError('--store postgres needs --dsn (or SERVICE_DSN)');
    return { dataDir: this.dataDir ?? (env.SERVICE_DATA_DIR || defaultDataDir(env)), backend, dsn };
  }

  protected async withStore<T>(fn: (store: Store) => Promise<T>): Promise<T> {
    const { dataDir, backend, dsn } = this.where();
    const { openStore } = await import('../../../../store/store.js');
    const store = await openStore({ backend, dataDir, ...(dsn ? { dsn } : {}) });
    try {
      await store.migrate();
      return await fn(store);
    } finally {
      await store.close();
    }
  }

  /** Runs owner statements in one transaction (Postgres: as the DSN's user, not the app role). */
  protected async ownerWrite(store: Store, statements: { text: string; values: unknown[] }[]): Promise<void> {
    const { backend, dsn } = this.where();
    if (backend === 'sqlite') {
      const { sql } = await import('kysely');
      await store.transaction(async (tx) => {
        for (const s of statements) await sql.raw(inline(s)).execute(tx);
      });
      return;
    }
    const pg = (await import('pg')).default;
    const client = new pg.Client({ connectionString: dsn });
    await client.connect();
    try {
      await client.query('begin');
      for (const s of statements) await client.query(s.text, s.values);
      await client.query('commit');
    } catch (err) {
      await client.query('rollback').catch(() => undefined);
      throw err;
    } finally {
      await client.end();
    }
  }
}

/** `$1` placeholders inlined as SQL string literals (SQLite path; values are validated strings/numbers). */
function inline(s: { text: string; values: unknown[] }): string {
  return s.text.replace(/\$(\d+)/g, (_m, n: string) => {
    const v = s.values[Number(n) - 1];
    return typeof v === 'number' ? String(v) : `'${String(v).replaceAll("'", "''")}'`;
  });
}

function nowTs(): string {
  return new Date().toISOString().replace(/\.(\d{3})Z$/, '.$1000000Z');
}

export class EventingEgressActuateCommand extends EgressOperatorCommand {
  static override paths = [['eventing', 'egress', 'actuate']];
  static override usage = BaseCommand.Usage({
    category: 'Eventing',
    description: 'Set the egress mode (compatibility or enforced) and the allowlist of destination hosts',
    details: `
      Operator command on the store (SQLite data directory, or Postgres with the owner's --dsn).
      \`enforced\`: creating or updating a subscription to a host outside the allowlist is refused and
      the delivery engine fails deliveries to such hosts; \`compatibility\`: nothing is refused,
      \`GET /v1/m/eventing/egress-policy\` lists what enforcing would block. \`--allow\` (repeatable,
      \`host\` or \`host:port\`) replaces the allowlist when given. See docs/eventing.md "Egress control".
    `,
    examples: [
      [
        'Enforce with two receivers',
        '$0 eventing egress actuate --mode enforced --allow soar.example.com --allow hooks.example.net:8443 --yes',
      ],
    ],
  });
  mode = Option.String('--mode', {
    required: true,
    validator: t.isEnum(['compatibility', 'enforced'] as const),
    description: 'compatibility or enforced',
  });
  allow = Option.Array('--allow', { description: 'allowed destination host or host:port (repeatable; replaces the allowlist)' });
  yes = yesOption();

  async execute(): Promise<number> {
    const { normalizeAllowEntry, readEgressPolicy } = await import('../../../../modules/eventing/egress.js');
    let allow: string[] | undefined;
    try {
      allow = this.allow?.map(normalizeAllowEntry);
    } catch (err) {
      throw new CliUsageError(`--allow: ${(err as Error).message}`);
    }
    await this.requireYes(this.yes, `set the egress mode to ${this.mode}${allow ? ' and replace the allowlist' : ''}`);
    return this.withStore(async (store) => {
      const at = nowTs();
      const statements = [{ text: 'update egress_settings set mode = $1, updated_at = $2 where id = 1', values: [this.mode, at] }];
      if (allow) {
        statements.push({ text: 'delete from egress_allowlist', values: [] });
        for (const host of new Set(allow))
          statements.push({ text: 'insert into egress_allowlist (host, created_at) values ($1, $2)', values: [host, at] });
      }
      await this.ownerWrite(store, statements);
      const policy = await readEgressPolicy(store);
      this.emit(
        policy,
        (p) => `egress mode ${p.mode}; fence ${p.fence_armed ? 'armed' : 'disarmed'}; allow: ${p.allow.join(', ') || '(none)'}`,
      );
      return ExitCode.OK;
    });
  }
}

export class EventingFenceStatusCommand extends EgressOperatorCommand {
  static override paths = [['eventing', 'fence', 'status']];
  static override usage = BaseCommand.Usage({
    category: 'Eventing',
    description: 'Show whether the database egress fence is armed, and the allowlist it enforces',
  });

  async execute(): Promise<number> {
    const { readEgressPolicy } = await import('../../../../modules/eventing/egress.js');
    return this.withStore(async (store) => {
      const p = await readEgressPolicy(store);
      this.emit(
        { armed: p.fence_armed, mode: p.mode, allow: p.allow },
        (s) => `fence ${s.armed ? 'armed' : 'disarmed'}; egress mode ${s.mode}; allow: ${s.allow.join(', ') || '(none)'}`,
      );
      return ExitCode.OK;
    });
  }
}

export class EventingFenceArmCommand extends EgressOperatorCommand {
  static override paths = [['eventing', 'fence', 'arm']];
  static override usage = BaseCommand.Usage({
    category: 'Eventing',
    description: 'Arm (or with --disarm, disarm) the database egress fence',
    details: `
      Armed, the database (a trigger on event_subscriptions) refuses any insert or update of an
      enabled subscription whose endpoint host is not in the egress allowlist, whatever path writes it.
      Run \`svc eventing fence verify\` afterwards.
    `,
  });
  disarm = Option.Boolean('--disarm', false, { description: 'disarm instead of arming' });
  yes = yesOption();

  async execute(): Promise<number> {
    const { readEgressPolicy } = await import('../../../../modules/eventing/egress.js');
    await this.requireYes(this.yes, this.disarm ? 'disarm the egress fence' : 'arm the egress fence');
    return this.withStore(async (store) => {
      await this.ownerWrite(store, [
        { text: 'update egress_settings set fence_armed = $1, updated_at = $2 where id = 1', values: [this.disarm ? 0 : 1, nowTs()] },
      ]);
      const p = await readEgressPolicy(store);
      this.emit(
        { armed: p.fence_armed, allow: p.allow },
        (s) => `fence ${s.armed ? 'armed' : 'disarmed'}; allow: ${s.allow.join(', ') || '(none)'}`,
      );
      return ExitCode.OK;
    });
  }
}

export class EventingFenceVerifyCommand extends EgressOperatorCommand {
  static override paths = [['eventing', 'fence', 'verify']];
  static override usage = BaseCommand.Usage({
    category: 'Eventing',
    description: 'Prove the database enforces the fence: exit 0 only if it refuses a forbidden write',
    details: `
      Attempts, through the app's own path (Postgres: the app role under row-level security), the
      insert of an enabled subscription to a host never allowlisted, in a transaction that is always
      rolled back. Exit 0 when the database refused it with the fence's error; exit 7 otherwise
      (fence disarmed, trigger missing, or any other outcome).
    `,
  });

  async execute(): Promise<number> {
    const { verifyFence } = await import('../../../../modules/eventing/egress.js');
    return this.withStore(async (store) => {
      const r = await verifyFence(store);
      this.emit({ enforced: r.refused, detail: r.detail }, (s) => `${s.enforced ? 'fence enforced' : 'FENCE NOT ENFORCED'}: ${s.detail}`);
      return r.refused ? ExitCode.OK : ExitCode.Degraded;
    });
  }
}
