/**
 * `svc connector ls|get|set|rm|test|health|redeliver`: output connectors and the ledger forwarder
 * (`/v1/console/connectors`, `/v1/connectors/health`; docs/connectors.md). `set` takes the kind's
 * config as JSON from `--config` (inline) or `--config-file` (a file, or - for stdin); secret fields
 * hold `secret:<name>` references (store the value with `svc secrets set`), never values.
 */
import { readFile } from 'node:fs/promises';
import { Option } from 'clipanion';
import { BaseCommand, ClientCommand, yesOption } from '../../client/base-command.js';
import { CliUsageError } from '../../client/errors.js';
import { ExitCode } from '../../client/exit-codes.js';

interface Connector {
  name: string;
  kind: string;
  tenant: string | null;
  format: string;
  enabled: boolean;
  sources: { ledger: boolean; system?: boolean; events: { types: string[]; min_severity: string | null } | null };
  secret_refs: string[];
  version: number;
  config: Record<string, unknown>;
}

interface Health {
  summary: Record<string, number>;
  items: Array<{
    name: string;
    kind: string;
    state: string;
    reason: string | null;
    last_success_at: string | null;
    last_error: string | null;
    lag: { records: number; seconds: number };
    dead_letters: number;
    failed_records: number;
  }>;
}

const sourcesText = (c: Connector): string =>
  [
    c.sources.ledger ? 'ledger' : '',
    c.sources.system ? 'system' : '',
    c.sources.events
      ? `events(${c.sources.events.types.join(',')}${c.sources.events.min_severity ? `>=${c.sources.events.min_severity}` : ''})`
      : '',
  ]
    .filter(Boolean)
    .join('+');

function table(items: Connector[]): string {
  if (items.length === 0) return 'no connector configured';
  return [
    'NAME  KIND  TENANT  FORMAT  SOURCES  ENABLED',
    ...items.map((c) => `${c.name}  ${c.kind}  ${c.tenant ?? 'all'}  ${c.format}  ${sourcesText(c)}  ${c.enabled ? 'yes' : 'no'}`),
  ].join('\n');
}

export class ConnectorLsCommand extends ClientCommand {
  static override paths = [['connector', 'ls']];
  static override usage = BaseCommand.Usage({
    category: 'Connectors',
    description: 'List output connectors',
    examples: [
      ['List', '$0 connector ls'],
      ['As JSON', '$0 connector ls -o json'],
    ],
  });
  async execute(): Promise<number> {
    const body = (await this.withClient((c) => c.get('/v1/console/connectors'))).body as { items: Connector[] };
    this.emit(body, (v) => table(v.items));
    return ExitCode.OK;
  }
}

export class ConnectorGetCommand extends ClientCommand {
  static override paths = [['connector', 'get']];
  static override usage = BaseCommand.Usage({
    category: 'Connectors',
    description: 'Show one connector (its config holds secret references only); --deliveries lists its delivery batches',
    examples: [['Show', '$0 connector get siem'], ['Its dead batches', '$0 connector get siem --deliveries dead']],
  });
  name = Option.String({ name: 'name' });
  deliveries = Option.String('--deliveries', { description: 'all, queued, delivering, delivered, failed or dead' });
  async execute(): Promise<number> {
    const body = (
      await this.withClient((c) =>
        c.request('GET', '/v1/console/connectors', {
          query: { name: this.name, ...(this.deliveries ? { deliveries: this.deliveries } : {}) },
        }),
      )
    ).body as { items: Connector[]; deliveries?: Array<Record<string, unknown>> };
    this.emit(body, (v) => {
      const c = v.items[0] as Connector;
      const lines = [
        `name: ${c.name}`,
        `kind: ${c.kind}`,
        `tenant: ${c.tenant ?? 'all tenants'}`,
        `format: ${c.format}`,
        `sources: ${sourcesText(c)}`,
        `enabled: ${c.enabled}`,
        `version: ${c.version}`,
        `config: ${JSON.stringify(c.config)}`,
      ];
      if (v.deliveries)
        lines.push(
          '',
          'DELIVERY  TENANT  SOURCE  SEQS  STATUS  ATTEMPTS  LAST ERROR',
          ...v.deliveries.map(
            (d) =>
              `${String(d['id'])}  ${String(d['tenant'])}  ${String(d['source'])}  ${String(d['from_seq'])}-${String(d['to_seq'])}  ` +
              `${String(d['status'])}  ${String(d['attempts'])}  ${String(d['last_error'] ?? '-')}`,
          ),
        );
      return lines.join('\n');
    });
    return ExitCode.OK;
  }
}

export class ConnectorSetCommand extends ClientCommand {
  static override paths = [['connector', 'set']];
  static override usage = BaseCommand.Usage({
    category: 'Connectors',
    description: 'Create or replace an output connector (validated by the server: kind, format token, config, secret references)',
    examples: [
      [
        'Forward the ledger of every tenant to a SIEM over syslog/TLS',
        `$0 connector set siem --kind syslog --all-tenants --config '{"host":"siem.example.com","ca_file":"/etc/svc/siem-ca.pem"}'`,
      ],
      [
        'The system chain (logins, tokens, users) as well as every tenant',
        `$0 connector set siem --kind syslog --all-tenants --system --config '{"host":"siem.example.com"}'`,
      ],
      [
        'Findings of high severity and up into a file',
        `$0 connector set findings --kind filelog --tenant 0197… --no-ledger --events finding.reported,finding.updated ` +
          `--min-severity high --config '{"path":"/var/log/svc/findings.log"}'`,
      ],
    ],
  });
  name = Option.String({ name: 'name' });
  kind = Option.String('--kind', { required: true, description: 'syslog, filelog, …' });
  allTenants = Option.Boolean('--all-tenants', false, { description: 'forward every tenant (otherwise --tenant names the one)' });
  format = Option.String('--format', { description: "a token of the kind's surface (default: the surface default)" });
  config = Option.String('--config', { description: 'the kind config as inline JSON' });
  configFile = Option.String('--config-file', { description: 'the kind config as JSON from a file (- for stdin)' });
  ledger = Option.Boolean('--ledger', true, { description: 'forward the audit ledger (default; --no-ledger to turn off)' });
  system = Option.Boolean('--system', false, {
    description: 'forward the system chain too (logins, tokens, users, connector changes); with --all-tenants only',
  });
  events = Option.String('--events', { description: 'comma-separated event types to forward' });
  minSeverity = Option.String('--min-severity', { description: 'info, low, medium, high or critical (with --events)' });
  disabled = Option.Boolean('--disabled', false, { description: 'store it disabled' });
  maxAttempts = Option.String('--max-attempts', { description: 'attempts per batch before it is dead (1-50, default 12)' });
  initialInterval = Option.String('--initial-interval', { description: 'seconds before the first retry, doubling (default 5)' });
  async execute(): Promise<number> {
    if (this.allTenants === (this.tenant !== undefined)) throw new CliUsageError('give exactly one of --tenant <id> or --all-tenants');
    if ((this.config === undefined) === (this.configFile === undefined))
      throw new CliUsageError('give the kind config with exactly one of --config or --config-file');
    const text =
      this.config ?? (this.configFile === '-' ? await readStdin(this.context.stdin) : await readFile(this.configFile as string, 'utf8'));
    let config: unknown;
    try {
      config = JSON.parse(text);
    } catch (err) {
      throw new CliUsageError(`the config is not JSON: ${(err as Error).message}`);
    }
    const int = (v: string | undefined, what: string): number | undefined => {
      if (v === undefined) return undefined;
      if (!/^\d+$/.test(v)) throw new CliUsageError(`${what} must be a whole number`);
      return Number(v);
    };
    const body: Record<string, unknown> = {
      name: this.name,
      kind: this.kind,
      // --tenant (the common option, which may come from the saved context) names the one tenant; --all-tenants, every one.
      tenant: this.allTenants ? null : this.tenant,
      config,
      enabled: !this.disabled,
      sources: {
        ledger: this.ledger,
        ...(this.system ? { system: true } : {}),
        ...(this.events
          ? {
              events: {
                types: this.events
                  .split(',')
                  .map((s) => s.trim())
                  .filter(Boolean),
                ...(this.minSeverity ? { min_severity: this.minSeverity } : {}),
              },
            }
          : {}),
      },
    };
    if (this.format !== undefined) body['format'] = this.format;
    const ma = int(this.maxAttempts, '--max-attempts');
    if (ma !== undefined) body['max_attempts'] = ma;
    const ii = int(this.initialInterval, '--initial-interval');
    if (ii !== undefined) body['initial_interval_s'] = ii;
    const res = (await this.withClient((c) => c.request('PUT', '/v1/console/connectors', { body }))).body as Connector;
    this.emit(
      res,
      (c) => `connector ${c.name} stored (version ${c.version}, ${c.enabled ? 'enabled' : 'disabled'}; svc connector health ${c.name})`,
    );
    return ExitCode.OK;
  }
}

async function readStdin(stdin: NodeJS.ReadableStream): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const c of stdin) chunks.push(Buffer.isBuffer(c) ? c : Buffer.from(String(c)));
  return Buffer.concat(chunks).toString('utf8');
}

export class ConnectorRmCommand extends ClientCommand {
  static override paths = [['connector', 'rm']];
  static override usage = BaseCommand.Usage({
    category: 'Connectors',
    description: 'Delete a connector with its cursors and deliveries',
    details: 'Needs `-y` when stdin is not a terminal.',
    examples: [['Delete', '$0 connector rm siem -y']],
  });
  name = Option.String({ name: 'name' });
  yes = yesOption();
  async execute(): Promise<number> {
    await this.requireYes(this.yes, `delete connector ${this.name} (its cursor and deliveries go with it)`);
    await this.withClient((c) => c.request('DELETE', '/v1/console/connectors', { query: { name: this.name } }));
    this.emit({ name: this.name, deleted: true }, (o) => `connector ${o.name} deleted`);
    return ExitCode.OK;
  }
}

export class ConnectorTestCommand extends ClientCommand {
  static override paths = [['connector', 'test']];
  static override usage = BaseCommand.Usage({
    category: 'Connectors',
    description: "Send one test event through the connector's receiver now; exit 7 unless it was delivered",
    examples: [['Test', '$0 connector test siem']],
  });
  name = Option.String({ name: 'name' });
  async execute(): Promise<number> {
    const res = (await this.withClient((c) => c.request('POST', '/v1/console/connectors/test', { body: { name: this.name } }))).body as {
      result: string;
      error: string | null;
      duration_ms: number;
    };
    this.emit(res, (r) => `test delivery: ${r.result} in ${r.duration_ms} ms${r.error ? ` (${r.error})` : ''}`);
    return res.result === 'delivered' ? ExitCode.OK : ExitCode.Degraded;
  }
}

export class ConnectorHealthCommand extends ClientCommand {
  static override paths = [['connector', 'health']];
  static override usage = BaseCommand.Usage({
    category: 'Connectors',
    description: 'Connector states, forwarder lag, last success and error, dead letters; exit 7 when one has failed',
    examples: [
      ['All', '$0 connector health'],
      ['One, as JSON', '$0 connector health siem -o json'],
    ],
  });
  name = Option.String({ name: 'name', required: false });
  async execute(): Promise<number> {
    const res = (await this.withClient((c) => c.request('GET', '/v1/connectors/health', { query: this.name ? { name: this.name } : {} })))
      .body as Health;
    this.emit(res, (h) =>
      [
        `${h.summary['total']} connector(s): ${h.summary['running']} running, ${h.summary['failed']} failed, ${h.summary['stopped']} ` +
          `stopped, ${h.summary['disabled']} disabled; ${h.summary['dead_letters']} dead letter(s)`,
        ...(h.items.length ? ['NAME  KIND  STATE  LAG (records/s)  DEAD  LAST SUCCESS  REASON / LAST ERROR'] : []),
        ...h.items.map(
          (i) =>
            `${i.name}  ${i.kind}  ${i.state}  ${i.lag.records}/${i.lag.seconds}  ${i.dead_letters}  ${i.last_success_at ?? '-'}  ` +
            `${i.reason ?? i.last_error ?? '-'}`,
        ),
      ].join('\n'),
    );
    return res.summary['failed'] ? ExitCode.Degraded : ExitCode.OK;
  }
}

interface Batch {
  id: string;
  tenant: string;
  source: string;
  from_seq: number;
  to_seq: number;
  status: string;
  attempts: number;
  last_error: string | null;
}

export class ConnectorRedeliverCommand extends ClientCommand {
  static override paths = [['connector', 'redeliver']];
  static override usage = BaseCommand.Usage({
    category: 'Connectors',
    description: "Requeue a connector's dead delivery batches (all, or one with --batch): attempts start over, seq ranges kept",
    details:
      'The batches go back to queued and are delivered again, lowest seq first on each lane; their records reach the receiver ' +
      'after the later records that were delivered while they were dead (docs/connectors.md). Requeueing every dead batch ' +
      'needs `-y` when stdin is not a terminal. Exit 4 for an unknown connector or batch, 5 when the batch is not dead.',
    examples: [
      ['Every dead batch of a connector', '$0 connector redeliver siem -y'],
      ['One batch (an id of `connector get --deliveries dead`)', '$0 connector redeliver siem --batch 0197…'],
    ],
  });
  name = Option.String({ name: 'name' });
  batch = Option.String('--batch', { description: 'the id of one dead batch (default: every dead batch of the connector)' });
  yes = yesOption();
  async execute(): Promise<number> {
    if (this.batch === undefined) await this.requireYes(this.yes, `redeliver every dead batch of connector ${this.name}`);
    const body = { name: this.name, ...(this.batch === undefined ? {} : { batch_id: this.batch }) };
    const res = (await this.withClient((c) => c.request('POST', '/v1/console/connectors/redeliver', { body }))).body as {
      name: string;
      requeued: Batch[];
    };
    this.emit(res, (r) =>
      r.requeued.length === 0
        ? `connector ${r.name} has no dead batch`
        : [
            `${r.requeued.length} batch(es) of connector ${r.name} requeued`,
            'DELIVERY  TENANT  SOURCE  SEQS  STATUS  ATTEMPTS',
            ...r.requeued.map((d) => `${d.id}  ${d.tenant}  ${d.source}  ${d.from_seq}-${d.to_seq}  ${d.status}  ${d.attempts}`),
          ].join('\n'),
    );
    return ExitCode.OK;
  }
}
