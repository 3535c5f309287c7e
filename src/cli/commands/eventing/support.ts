/** Shared pieces of the `svc eventing …` commands: the shapes, their tables, and the subscription flags. */
import { readFileSync } from 'node:fs';
import { Option } from 'clipanion';
import { CliError, CliUsageError } from '../../client/errors.js';
import { ExitCode } from '../../client/exit-codes.js';
import type { HttpClient } from '../../client/http-client.js';
import { isUuid } from '../../client/resolve.js';
import { ClientCommand } from '../../client/base-command.js';
import { fields, table } from '../auth/support.js';

export type SubscriptionView = {
  id: string;
  name: string;
  enabled: boolean;
  event_types: string[];
  endpoint: string;
  sink_format: string;
  role: string;
  auth: { kind: string; header?: string; hint: string } | null;
  retry: { max_attempts: number; initial_interval_s: number };
  timeout_ms: number;
  ca_pem: string | null;
  pin_sha256: string | null;
  cursor_seq: number;
  version: number;
  secret?: string;
  [k: string]: unknown;
};

export const SUBSCRIPTIONS = '/v1/m/eventing/subscriptions';

/** A subscription's id from its id or its name (names are unique in a tenant; the list is paged through). */
export async function subscriptionId(client: HttpClient, ref: string): Promise<string> {
  if (isUuid(ref)) return ref.toLowerCase();
  if (ref.trim() === '' || ref.length > 200 || /[\u0000-\u001f\u007f]/.test(ref))
    throw new CliUsageError(`invalid subscription ${JSON.stringify(ref)}: give its id (a UUID) or name`);
  let cursor: string | undefined;
  do {
    const page = (await client.get(SUBSCRIPTIONS, { query: { limit: '1000', ...(cursor !== undefined ? { cursor } : {}) } })).body as {
      items: SubscriptionView[];
      has_more: boolean;
      cursor?: string;
    };
    const hit = page.items.find((s) => s.name === ref);
    if (hit) return hit.id;
    cursor = page.has_more ? page.cursor : undefined;
  } while (cursor !== undefined);
  throw new CliError(ExitCode.NotFound, 'not_found', `no subscription named ${JSON.stringify(ref)}`);
}

export type DeliveryView = {
  id: string;
  subscription_id: string;
  event_id: string;
  event_seq: number;
  kind: string;
  status: string;
  attempts: number;
  next_attempt_at: string | null;
  last_status: number | null;
  last_error: string | null;
};

export function subscriptionTable(items: SubscriptionView[]): string {
  return table(items, [
    ['id', (s) => s.id],
    ['name', (s) => s.name],
    ['enabled', (s) => s.enabled],
    ['types', (s) => s.event_types.join(',')],
    ['endpoint', (s) => s.endpoint],
    ['format', (s) => s.sink_format],
    ['role', (s) => s.role],
    ['v', (s) => s.version],
  ]);
}

/** One subscription; a secret (create, rotate-secret) is printed last, once. */
export function subscriptionFields({ secret, ca_pem, auth, retry, ...s }: SubscriptionView): string {
  const text = fields({
    ...s,
    ca_pem: ca_pem ? '(set)' : '-',
    auth: auth ? `${auth.kind}${auth.header ? ` ${auth.header}` : ''} …${auth.hint}` : '-',
    max_attempts: retry.max_attempts,
    initial_interval_s: retry.initial_interval_s,
  });
  return secret ? `${text}\n\nsigning secret (shown once, store it now):\n${secret}` : text;
}

export function deliveryTable(items: DeliveryView[]): string {
  return table(items, [
    ['id', (d) => d.id],
    ['subscription', (d) => d.subscription_id],
    ['seq', (d) => d.event_seq],
    ['kind', (d) => d.kind],
    ['status', (d) => d.status],
    ['attempts', (d) => d.attempts],
    ['http', (d) => d.last_status ?? '-'],
    ['next attempt', (d) => d.next_attempt_at ?? '-'],
    ['error', (d) => d.last_error ?? '-'],
  ]);
}

const int = (flag: string, v: string | undefined): number | undefined => {
  if (v === undefined) return undefined;
  if (!/^[0-9]+$/.test(v)) throw new CliUsageError(`${flag} takes a whole number, got ${JSON.stringify(v)}`);
  return Number(v);
};

const secretFile = (flag: string, file: string): string => {
  try {
    return readFileSync(file, 'utf8').replace(/\r?\n$/, '');
  } catch (err) {
    throw new CliUsageError(`${flag}: cannot read ${file}: ${(err as Error).message}`);
  }
};

/** The flags create and update share (update: every one optional, absent = unchanged). */
export abstract class SubscriptionFlagsCommand extends ClientCommand {
  name = Option.String('--name', { description: 'Display name (unique in the tenant)' });
  endpoint = Option.String('--endpoint', {
    description: 'Receiver URL (https://; http:// and loopback only with the server flag SERVICE_EVENTING_ALLOW_INSECURE_ENDPOINTS)',
  });
  eventType = Option.Array('--event-type', { description: 'An event type to receive (repeatable; see GET /v1/m/eventing/event-types)' });
  sinkFormat = Option.String('--sink-format', { description: 'ocsf (default), cef, leef, syslog, otlp, otlp_envelope, json' });
  role = Option.String('--role', { description: 'Role ceiling: only event types this role may read are delivered (default: yours)' });
  maxAttempts = Option.String('--max-attempts', { description: 'Attempts before a delivery is dead (default 12)' });
  initialInterval = Option.String('--initial-interval', {
    description: 'First retry delay in seconds (default 30; doubles, capped at 8 h)',
  });
  timeoutMs = Option.String('--timeout-ms', { description: 'Per-attempt timeout in ms (default 10000)' });
  caFile = Option.String('--ca-file', { description: 'PEM CA bundle of a private receiver' });
  receiverPin = Option.String('--receiver-pin-sha256', { description: "Base64 SHA-256 of the receiver's public key (a private receiver)" });
  bearerFile = Option.String('--auth-bearer-file', { description: 'File holding a bearer token the receiver expects (stored sealed)' });
  headerName = Option.String('--auth-header', { description: 'Header name of a header credential (with --auth-value-file)' });
  valueFile = Option.String('--auth-value-file', { description: 'File holding that header value (stored sealed)' });
  disabled = Option.Boolean('--disabled', { description: 'Create it (or set it) disabled' });
}

export type FlagValues = {
  name?: string;
  endpoint?: string;
  eventType?: string[];
  sinkFormat?: string;
  role?: string;
  maxAttempts?: string;
  initialInterval?: string;
  timeoutMs?: string;
  caFile?: string;
  receiverPin?: string;
  bearerFile?: string;
  headerName?: string;
  valueFile?: string;
  disabled?: boolean;
};

/** The request body from the flags, on top of `base` (update: the current subscription). */
export function bodyFrom(f: FlagValues, base: Partial<SubscriptionView> = {}): Record<string, unknown> {
  const body: Record<string, unknown> = {
    name: f.name ?? base.name,
    endpoint: f.endpoint ?? base.endpoint,
    event_types: f.eventType && f.eventType.length > 0 ? f.eventType : base.event_types,
    sink_format: f.sinkFormat ?? base.sink_format,
    role: f.role ?? base.role,
    retry: {
      max_attempts: int('--max-attempts', f.maxAttempts) ?? base.retry?.max_attempts,
      initial_interval_s: int('--initial-interval', f.initialInterval) ?? base.retry?.initial_interval_s,
    },
    timeout_ms: int('--timeout-ms', f.timeoutMs) ?? base.timeout_ms,
    ca_pem: f.caFile ? secretFile('--ca-file', f.caFile) : base.ca_pem,
    pin_sha256: f.receiverPin ?? base.pin_sha256,
    enabled: f.disabled ? false : base.enabled,
  };
  if (f.bearerFile) body['auth'] = { kind: 'bearer', token: secretFile('--auth-bearer-file', f.bearerFile) };
  else if (f.headerName || f.valueFile) {
    if (!f.headerName || !f.valueFile) throw new CliUsageError('--auth-header and --auth-value-file go together');
    body['auth'] = { kind: 'header', name: f.headerName, value: secretFile('--auth-value-file', f.valueFile) };
  }
  // JSON round trip drops the undefined fields: the server applies its defaults.
  return JSON.parse(JSON.stringify(body)) as Record<string, unknown>;
}
