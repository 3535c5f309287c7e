/** Shared pieces of the `svc agent` commands: the agent shape, its table, and `--label k=v` parsing. */
import { CliError } from '../../client/errors.js';
import { ExitCode } from '../../client/exit-codes.js';
import { fields, table } from '../auth/support.js';

export type AgentView = {
  id: string;
  name: string;
  kind: string;
  external_id: string;
  status: string;
  labels: Record<string, string>;
  version: number;
  created_at: string;
  updated_at: string;
};

/** Text rendering of agent lists. */
export function agentTable(items: AgentView[]): string {
  return table(items, [
    ['id', (a) => a.id],
    ['name', (a) => a.name],
    ['kind', (a) => a.kind],
    ['status', (a) => a.status],
    ['external id', (a) => a.external_id || '-'],
    ['labels', (a) => Object.entries(a.labels).map(([k, v]) => `${k}=${v}`).join(',') || '-'],
    ['v', (a) => a.version],
  ]);
}

/** Text rendering of one agent. */
export function agentFields(a: AgentView): string {
  return fields({ ...a, labels: Object.entries(a.labels).map(([k, v]) => `${k}=${v}`) });
}

/** `k=v` pairs of `--label`; a malformed one is a usage error (exit 2). */
export function parseLabels(pairs: readonly string[] | undefined): Record<string, string> | undefined {
  if (!pairs || pairs.length === 0) return undefined;
  const out: Record<string, string> = {};
  for (const p of pairs) {
    const i = p.indexOf('=');
    if (i <= 0) throw new CliError(ExitCode.Usage, 'usage', `--label takes key=value, got ${JSON.stringify(p)}`);
    out[p.slice(0, i)] = p.slice(i + 1);
  }
  return out;
}
