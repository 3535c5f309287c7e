/**
 * `svc bench plan` (issue 36 item 2): from an operator's profile and the figures measured on this
 * host (bench/results/*.json), the sizing answer. Pure functions; the command reads the files.
 *
 * The model is deliberately simple and says so: each measured rate is what this host does when that
 * kind of work alone saturates it, so the share of the host a profile needs is the sum of
 * (asked rate ÷ measured rate) over the kinds of work. Everything beyond one node is extrapolated.
 */

/** What the operator gives (JSON or YAML, snake_case). */
export interface Profile {
  name: string;
  agents: number;
  collectors: number;
  /** observations/s pushed by the collectors at peak */
  observations_per_sec: number;
  /** access-map edges held */
  edges: number;
  /** ledger records per day (audited writes and everything else the ledger records) */
  records_per_day: number;
  retention_days: number;
  /** full-day audit exports per day */
  exports_per_day: number;
  /** every ledger record forwarded to a SIEM */
  siem_forwarding: boolean;
  /** PEP decisions/s at peak (each one is a ledger record too) */
  policy_decisions_per_sec: number;
  /** peak-to-average of records_per_day (default 3) */
  peak_factor?: number;
}

export const PROFILE_FIELDS: Array<keyof Profile> = [
  'name',
  'agents',
  'collectors',
  'observations_per_sec',
  'edges',
  'records_per_day',
  'retention_days',
  'exports_per_day',
  'siem_forwarding',
  'policy_decisions_per_sec',
];

/** One figure with where it came from. */
export interface Figure {
  value: number;
  unit: string;
  /** result file it was read from */
  source: string;
  measured: true;
}

export type FigureName =
  | 'ingest_observations_per_sec'
  | 'audited_writes_per_sec'
  | 'pep_decisions_per_sec'
  | 'ledger_appends_sqlite_per_sec'
  | 'ledger_appends_postgres_per_sec'
  | 'ledger_bytes_per_record'
  | 'accessmap_bytes_per_edge'
  | 'export_records_per_sec'
  | 'forward_records_per_sec'
  | 'idle_rss_mib';

export type Figures = Partial<Record<FigureName, Figure>>;

/** A result file of `npm run bench` / `svc bench` in the harness format. */
export interface ResultFile {
  scenario: string;
  date?: string;
  cores?: number;
  cpuModel?: string;
  subject?: Record<string, unknown>;
  raw: Array<{ target: string; path: string; requestsPerSec: number; detail?: Record<string, unknown> }>;
}

/**
 * Extracts the figures the plan needs. `results` maps a scenario to its result files, oldest first
 * (`npm run bench` files and `svc bench -o json` files alike): each figure comes from the newest file
 * that has it, so a `svc bench ledger-append --store postgres` run does not hide an earlier SQLite figure.
 */
export function figuresFrom(results: Map<string, Array<{ file: string; result: ResultFile }>>): Figures {
  const f: Figures = {};
  for (const [scenario, files] of results) for (const one of files) figuresOf(scenario, one, f);
  return f;
}

function figuresOf(scenario: string, one: { file: string; result: ResultFile }, f: Figures): void {
  const put = (name: FigureName, value: unknown, unit: string, source: string): void => {
    if (typeof value === 'number' && Number.isFinite(value) && value > 0) f[name] = { value, unit, source, measured: true };
  };
  const get = (s: string): { file: string; result: ResultFile } | undefined => (s === scenario ? one : undefined);
  const ingest = get('ingest');
  if (ingest) put('ingest_observations_per_sec', ingest.result.raw[0]?.requestsPerSec, 'observations/s', ingest.file);
  const aw = get('audited-write');
  if (aw) put('audited_writes_per_sec', aw.result.raw.find((m) => m.path.includes('/v1/agents'))?.requestsPerSec, 'requests/s', aw.file);
  const pep = get('pep');
  if (pep) {
    const rates = pep.result.raw.filter((m) => m.path.includes('pep/decisions')).map((m) => m.requestsPerSec);
    if (rates.length > 0) put('pep_decisions_per_sec', Math.min(...rates), 'decisions/s (slowest path)', pep.file);
  }
  const la = get('ledger-append');
  if (la) {
    put('ledger_appends_sqlite_per_sec', la.result.raw.find((m) => m.target.includes('sqlite'))?.requestsPerSec, 'appends/s', la.file);
    put('ledger_appends_postgres_per_sec', la.result.raw.find((m) => m.target.includes('postgres'))?.requestsPerSec, 'appends/s', la.file);
    put('ledger_bytes_per_record', la.result.subject?.sqlite_bytes_per_record, 'bytes/record (SQLite file incl. indexes)', la.file);
  }
  const layout = get('accessmap-layout');
  if (layout) {
    const bpe = layout.result.raw.map((m) => m.detail?.bytesPerEdge).filter((v): v is number => typeof v === 'number');
    if (bpe.length > 0)
      put('accessmap_bytes_per_edge', Math.max(...bpe), 'bytes/edge (largest layout measured, incl. indexes)', layout.file);
  }
  const exp = get('export');
  if (exp) {
    const cef = exp.result.raw.find((m) => m.path === 'cef');
    put('export_records_per_sec', cef?.requestsPerSec, 'records/s (CEF)', exp.file);
    put('idle_rss_mib', cef?.detail?.idleRssMiB, 'MiB (idle server RSS)', exp.file);
  }
  const fwd = get('forward');
  if (fwd) {
    const syslog = fwd.result.raw.find((m) => m.target === 'forward-syslog-tls');
    put('forward_records_per_sec', syslog?.requestsPerSec, 'records/s (ledger forwarder into syslog over TLS)', fwd.file);
  }
}

export interface PlanAnswer {
  profile: Profile;
  fits_one_node_sqlite: boolean;
  store: 'sqlite' | 'postgres';
  /** API nodes (replicas) recommended */
  nodes: number;
  cpu: { utilisation: number; headroom: number; breakdown: Record<string, number> };
  ledger: { appends_per_sec_peak: number; sqlite_single_writer_share: number };
  memory_mib: number;
  disk: { bytes_per_day: number; ledger_bytes_retention: number; accessmap_bytes: number; total_bytes_retention: number };
  reasons: string[];
  figures: Figures;
  measured: string[];
  extrapolated: string[];
}

/** Thrown when a figure the profile needs was never measured on this host. */
export class MissingFigures extends Error {
  constructor(readonly missing: FigureName[]) {
    super(`no measured figure for ${missing.join(', ')}`);
  }
}

/** Share of one node the plan allows before recommending more (30 % headroom). */
export const TARGET_UTILISATION = 0.7;
/** Practical ceiling of one SQLite file before moving to Postgres (an assumption, not a measurement). */
export const SQLITE_MAX_BYTES = 1024 ** 4;

export function plan(p: Profile, f: Figures): PlanAnswer {
  const peak = p.peak_factor ?? 3;
  const needs: FigureName[] = ['audited_writes_per_sec', 'ledger_appends_sqlite_per_sec', 'ledger_bytes_per_record', 'idle_rss_mib'];
  if (p.observations_per_sec > 0) needs.push('ingest_observations_per_sec');
  if (p.policy_decisions_per_sec > 0) needs.push('pep_decisions_per_sec');
  if (p.edges > 0) needs.push('accessmap_bytes_per_edge');
  if (p.exports_per_day > 0 || p.siem_forwarding) needs.push('export_records_per_sec');
  const missing = needs.filter((n) => f[n] === undefined);
  if (missing.length > 0) throw new MissingFigures(missing);
  const v = (n: FigureName): number => (f[n] as Figure).value;

  const recordsPerSecAvg = p.records_per_day / 86_400;
  const recordsPerSecPeak = recordsPerSecAvg * peak;
  const breakdown: Record<string, number> = {
    records: recordsPerSecPeak / v('audited_writes_per_sec'),
    observations: p.observations_per_sec > 0 ? p.observations_per_sec / v('ingest_observations_per_sec') : 0,
    policy_decisions: p.policy_decisions_per_sec > 0 ? p.policy_decisions_per_sec / v('pep_decisions_per_sec') : 0,
    exports: p.exports_per_day > 0 ? (p.exports_per_day * p.records_per_day) / (v('export_records_per_sec') * 86_400) : 0,
    siem_forwarding: p.siem_forwarding ? recordsPerSecPeak / (f.forward_records_per_sec ?? (f.export_records_per_sec as Figure)).value : 0,
  };
  const utilisation = Object.values(breakdown).reduce((a, b) => a + b, 0);
  const ledgerPeak = recordsPerSecPeak + p.policy_decisions_per_sec;
  const writerShare = ledgerPeak / v('ledger_appends_sqlite_per_sec');
  const ledgerDay = p.records_per_day * v('ledger_bytes_per_record');
  const ledgerRetention = ledgerDay * p.retention_days;
  const accessmapBytes = p.edges > 0 ? p.edges * v('accessmap_bytes_per_edge') : 0;
  const total = ledgerRetention + accessmapBytes;
  // Memory: the idle server plus a page cache that holds the access map, plus a quarter for the rest.
  const memory = Math.ceil((v('idle_rss_mib') + accessmapBytes / 1024 ** 2) * 1.25);

  const reasons: string[] = [];
  if (utilisation > TARGET_UTILISATION)
    reasons.push(
      `the profile needs ${(utilisation * 100).toFixed(0)} % of this host's CPU at peak, above the ${TARGET_UTILISATION * 100} % ` +
        `that leaves 30 % headroom`,
    );
  if (writerShare > TARGET_UTILISATION)
    reasons.push(
      `${ledgerPeak.toFixed(0)} ledger appends/s at peak is ${(writerShare * 100).toFixed(0)} % of SQLite's single writer ` +
        `(${v('ledger_appends_sqlite_per_sec').toFixed(0)}/s measured)`,
    );
  if (total > SQLITE_MAX_BYTES) reasons.push(`${fmtBytes(total)} for the retention is above the 1 TiB kept in one SQLite file`);
  const fits = reasons.length === 0;
  const nodes = fits ? 1 : Math.max(2, Math.ceil(utilisation / TARGET_UTILISATION));
  if (fits)
    reasons.push(
      `${(utilisation * 100).toFixed(1)} % of this host's CPU at peak and ${(writerShare * 100).toFixed(1)} % of SQLite's single ` +
        `writer: one node with SQLite`,
    );
  else {
    reasons.push(`Postgres with ${nodes} API replicas (each node taken to give this host's measured capacity; Postgres on its own host)`);
    const pg = f.ledger_appends_postgres_per_sec?.value;
    if (pg !== undefined && ledgerPeak > pg * TARGET_UTILISATION)
      reasons.push(
        `${ledgerPeak.toFixed(0)} appends/s is above 70 % of one Postgres chain's measured ${pg.toFixed(0)}/s: the ledger has one ` +
          `writer per chain, so split the load over tenants (one chain each)`,
      );
  }
  const measured = Object.entries(f).map(([k, x]) => `${k} = ${round(x.value)} ${x.unit} (${x.source})`);
  const extrapolated = [
    `peak factor ${peak} on records/day (assumed, set peak_factor in the profile)`,
    'CPU share = sum of asked rate ÷ measured rate per kind of work (assumes the kinds of work cost the same mixed as alone)',
    f.forward_records_per_sec && p.siem_forwarding
      ? 'each export covers one day of records; SIEM forwarding at the measured forwarder rate (syslog over TLS) alone on the host'
      : 'each export covers one day of records; SIEM forwarding costs as much CPU per record as an export',
    'disk: measured bytes per record and per edge times the profile counts; SQLite WAL is bounded by its checkpoints and not counted ' +
      'per record',
    'memory: idle RSS + a page cache holding the whole access map, + 25 %',
    ...(fits ? [] : [`${nodes} nodes: linear scale-out of the one-node figures over Postgres (not measured)`]),
  ];
  return {
    profile: p,
    fits_one_node_sqlite: fits,
    store: fits ? 'sqlite' : 'postgres',
    nodes,
    cpu: {
      utilisation: round(utilisation),
      headroom: round(Math.max(0, 1 - utilisation)),
      breakdown: Object.fromEntries(Object.entries(breakdown).map(([k, x]) => [k, round(x)])),
    },
    ledger: { appends_per_sec_peak: round(ledgerPeak), sqlite_single_writer_share: round(writerShare) },
    memory_mib: memory,
    disk: {
      bytes_per_day: Math.round(ledgerDay),
      ledger_bytes_retention: Math.round(ledgerRetention),
      accessmap_bytes: Math.round(accessmapBytes),
      total_bytes_retention: Math.round(total),
    },
    reasons,
    figures: f,
    measured,
    extrapolated,
  };
}

/** Validates a parsed profile document. */
export function parseProfile(doc: unknown): Profile {
  if (typeof doc !== 'object' || doc === null) throw new TypeError('the profile must be a mapping');
  const d = doc as Record<string, unknown>;
  for (const k of PROFILE_FIELDS) {
    if (d[k] === undefined) throw new TypeError(`the profile lacks ${k}`);
    if (k === 'name' && typeof d[k] !== 'string') throw new TypeError('name must be a string');
    if (k === 'siem_forwarding' && typeof d[k] !== 'boolean') throw new TypeError('siem_forwarding must be true or false');
    if (k !== 'name' && k !== 'siem_forwarding' && !(typeof d[k] === 'number' && (d[k] as number) >= 0))
      throw new TypeError(`${k} must be a number ≥ 0`);
  }
  if (d.peak_factor !== undefined && !(typeof d.peak_factor === 'number' && d.peak_factor >= 1))
    throw new TypeError('peak_factor must be a number ≥ 1');
  return d as unknown as Profile;
}

export function fmtBytes(n: number): string {
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB', 'PiB'];
  let i = 0;
  while (n >= 1024 && i < units.length - 1) {
    n /= 1024;
    i++;
  }
  return `${n.toFixed(i === 0 ? 0 : 1)} ${units[i]}`;
}

function round(x: number): number {
  return Math.round(x * 10_000) / 10_000;
}
