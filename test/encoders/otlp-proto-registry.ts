/**
 * Loads the committed opentelemetry-proto v1.4.0 descriptor set (see otlp-proto/regenerate.sh) into
 * @bufbuild/protobuf, and prepares OTLP/JSON lines for its strict `fromJson` (unknown keys rejected).
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { createFileRegistry, fromBinary, type DescMessage } from '@bufbuild/protobuf';
import { FileDescriptorSetSchema } from '@bufbuild/protobuf/wkt';

/** Repo root (works from `test/` and from `dist/test/`). */
export const REPO_ROOT = (() => {
  let dir = path.dirname(fileURLToPath(import.meta.url));
  while (path.basename(dir) !== 'test') dir = path.dirname(dir);
  dir = path.dirname(dir);
  return path.basename(dir) === 'dist' ? path.dirname(dir) : dir;
})();

/** The committed descriptor set file. */
export const DESCRIPTOR_FILE = path.join(REPO_ROOT, 'test/encoders/otlp-proto/otlp-logs.binpb');

const registry = createFileRegistry(fromBinary(FileDescriptorSetSchema, readFileSync(DESCRIPTOR_FILE)));

function message(name: string): DescMessage {
  const d = registry.getMessage(name);
  if (d === undefined) throw new Error(`${name} missing from descriptor set`);
  return d;
}

/** `ExportLogsServiceRequest` descriptor. */
export const ExportLogsServiceRequest = message('opentelemetry.proto.collector.logs.v1.ExportLogsServiceRequest');
/** `LogRecord` descriptor. */
export const LogRecord = message('opentelemetry.proto.logs.v1.LogRecord');

/** Numbers defined by the `SeverityNumber` enum (proto3 enums are open, so fromJson won't check). */
export const SEVERITY_NUMBERS: readonly number[] =
  LogRecord.fields.find((f) => f.name === 'severity_number')?.enum?.values.map((v) => v.number) ?? [];

/**
 * OTLP/JSON writes trace/span ids as hex where the protobuf JSON mapping expects base64
 * (OTLP spec "JSON Protobuf Encoding"): convert in a copy, asserting the hex form on the way.
 */
export function hexIdsToBase64(logRecord: Record<string, unknown>): Record<string, unknown> {
  const out = { ...logRecord };
  for (const [k, len] of [['traceId', 32], ['spanId', 16]] as const) {
    const v = out[k];
    if (v === undefined) continue;
    if (typeof v !== 'string' || !new RegExp(`^[0-9a-f]{${len}}$`).test(v))
      throw new Error(`${k} is not ${len} lowercase hex: ${String(v)}`);
    out[k] = Buffer.from(v, 'hex').toString('base64');
  }
  return out;
}

/** Same, for a whole export request. */
export function requestForFromJson(req: Record<string, unknown>): Record<string, unknown> {
  const rl = req['resourceLogs'] as Array<Record<string, unknown>>;
  return {
    ...req,
    resourceLogs: rl.map((r) => ({
      ...r,
      scopeLogs: (r['scopeLogs'] as Array<Record<string, unknown>>).map((s) => ({
        ...s,
        logRecords: (s['logRecords'] as Array<Record<string, unknown>>).map(hexIdsToBase64),
      })),
    })),
  };
}

/** Every object key in the tree (not values) is lowerCamelCase, as the OTLP JSON encoding requires. */
export function nonCamelKeys(value: unknown, at = '$'): string[] {
  if (Array.isArray(value)) return value.flatMap((v, i) => nonCamelKeys(v, `${at}[${i}]`));
  if (value === null || typeof value !== 'object') return [];
  return Object.entries(value).flatMap(([k, v]) =>
    (/^[a-z][a-zA-Z0-9]*$/.test(k) ? [] : [`${at}.${k}`]).concat(nonCamelKeys(v, `${at}.${k}`)),
  );
}
