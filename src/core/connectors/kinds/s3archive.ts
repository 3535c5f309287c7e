/**
 * `s3archive`: batches archived as gzip-compressed NDJSON objects in any S3-compatible store.
 *
 * One object per tenant of a batch; its body is the items' lines, each followed by LF, gzip'd.
 * The key is deterministic, so a retried batch overwrites the same object rather than adding one:
 *   `<prefix>/<tenant>/<yyyy>/<mm>/<dd>/<first-seq>-<last-seq>.ndjson.gz` for ledger records (seqs
 *   zero-padded to 20 digits so keys sort in seq order), and
 *   `<prefix>/<tenant>/<yyyy>/<mm>/<dd>/events-<sha256(ids) first 32 hex>.ndjson.gz` for events;
 * the date is the UTC date of the object's first item (`undated` when it has no time).
 * The object's SHA-256 (over the stored gzip bytes) is returned in `artifacts`, stored as the
 * object's `x-amz-meta-sha256`, and sent as `x-amz-checksum-sha256` on single-part uploads so a
 * store that checks it refuses a corrupted upload. Objects above `multipart_threshold_bytes` go up
 * in parts (`@aws-sdk/lib-storage`). Credentials come from secret references, read at every batch.
 * An S3 error answer with status 408/429/5xx (or SlowDown/RequestTimeout/InternalError) retries;
 * other 4xx (AccessDenied, NoSuchBucket, InvalidAccessKeyId…) fail the batch.
 */
import { createHash } from 'node:crypto';
import { gzipSync } from 'node:zlib';
import type { S3Client } from '@aws-sdk/client-s3';
import Type from 'typebox';
import {
  endpointProperties,
  joinLines,
  SECRET_REF,
  networkFailure,
  openDispatcher,
  validateEndpoint,
  type HttpEndpointConfig,
} from './http-common.js';
import { UndiciSdkHandler } from './s3-undici-handler.js';
import type { ConnectorKind, ConnectorSink, KindContext, SinkItem, SinkResult } from './types.js';

export interface S3ArchiveConfig extends HttpEndpointConfig {
  bucket: string;
  region?: string;
  prefix?: string;
  force_path_style?: boolean;
  access_key_id_secret: string;
  secret_access_key_secret: string;
  session_token_secret?: string;
  multipart_threshold_bytes?: number;
  part_size_bytes?: number;
  server_side_encryption?: 'AES256' | 'aws:kms';
}

const MIB = 1024 * 1024;
const { url: _url, ...endpointRest } = endpointProperties('');

export const s3ArchiveConfigSchema = Type.Object(
  {
    url: Type.String({
      minLength: 1,
      maxLength: 2048,
      pattern: '^https?://[^\\s]+$',
      description: 'the S3 endpoint, e.g. https://s3.eu-west-1.amazonaws.com or https://minio.internal:9000',
    }),
    ...endpointRest,
    bucket: Type.String({ pattern: '^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$' }),
    region: Type.Optional(Type.String({ pattern: '^[a-z0-9-]{1,32}$', default: 'us-east-1' })),
    prefix: Type.Optional(Type.String({ pattern: "^[A-Za-z0-9!_.*'()-]+(/[A-Za-z0-9!_.*'()-]+)*$", maxLength: 256, default: 'svc-audit' })),
    force_path_style: Type.Optional(
      Type.Boolean({
        default: false,
        description: 'path-style URLs (<endpoint>/<bucket>/<key>), for MinIO, Ceph and other S3-compatible stores',
      }),
    ),
    access_key_id_secret: SECRET_REF,
    secret_access_key_secret: SECRET_REF,
    session_token_secret: Type.Optional(SECRET_REF),
    multipart_threshold_bytes: Type.Optional(Type.Integer({ minimum: 5 * MIB, maximum: 5 * 1024 * MIB, default: 16 * MIB })),
    part_size_bytes: Type.Optional(Type.Integer({ minimum: 5 * MIB, maximum: 512 * MIB, default: 8 * MIB })),
    server_side_encryption: Type.Optional(Type.Union([Type.Literal('AES256'), Type.Literal('aws:kms')])),
  },
  { additionalProperties: false },
);

const pad = (n: number): string => String(n).padStart(20, '0');

/** The object key of one tenant's items (deterministic: the same items give the same key). */
export function objectKey(prefix: string, tenant: string, items: readonly SinkItem[]): string {
  const first = items[0] as SinkItem;
  const last = items[items.length - 1] as SinkItem;
  const t = first.time === undefined ? Number.NaN : Date.parse(first.time);
  const day = Number.isNaN(t) ? 'undated' : new Date(t).toISOString().slice(0, 10).replaceAll('-', '/');
  const safeTenant = tenant === '' ? '_' : encodeURIComponent(tenant);
  const name =
    first.seq !== undefined && last.seq !== undefined
      ? `${pad(first.seq)}-${pad(last.seq)}`
      : `events-${createHash('sha256').update(items.map((i) => i.id).join('\n')).digest('hex').slice(0, 32)}`;
  return `${prefix}/${safeTenant}/${day}/${name}.ndjson.gz`;
}

/** The items of a batch by tenant, in first-appearance order, each keeping batch order. */
function byTenant(items: readonly SinkItem[]): Array<[string, SinkItem[]]> {
  const m = new Map<string, SinkItem[]>();
  for (const i of items) {
    const g = m.get(i.tenant);
    if (g) g.push(i);
    else m.set(i.tenant, [i]);
  }
  return [...m.entries()];
}

function s3Failure(err: unknown, signal: AbortSignal): SinkResult {
  const e = err as {
    name?: string;
    message?: string;
    $metadata?: { httpStatusCode?: number };
    $response?: { headers?: Record<string, string> };
  };
  const status = e?.$metadata?.httpStatusCode;
  if (status === undefined) return networkFailure(err, signal);
  // S3 error codes and messages never contain the credentials (a signature mismatch names none)
  const what = `S3 answered ${status} ${e.name ?? ''}${e.message && e.message !== e.name ? `: ${e.message.slice(0, 200)}` : ''}`;
  const retryable = status === 408 || status === 429 || status >= 500 || e.name === 'SlowDown' || e.name === 'RequestTimeout';
  return { result: retryable ? 'retry' : 'failed', status, error: what };
}

/** The AWS SDK is loaded when an s3archive connector first sends: it takes seconds to import, and most servers never use it. */
type AwsSdk = typeof import('@aws-sdk/client-s3') & typeof import('@aws-sdk/lib-storage');
let sdkLoading: Promise<AwsSdk> | undefined;
function loadSdk(): Promise<AwsSdk> {
  sdkLoading ??= Promise.all([import('@aws-sdk/client-s3'), import('@aws-sdk/lib-storage')]).then(([s3, storage]) => ({
    ...s3,
    ...storage,
  }));
  return sdkLoading;
}

class S3ArchiveSink implements ConnectorSink {
  readonly #dispatcher;
  readonly #handler;
  constructor(readonly c: S3ArchiveConfig, private readonly ctx: KindContext) {
    this.#dispatcher = openDispatcher(c, ctx.dataDir, 8);
    this.#handler = new UndiciSdkHandler(this.#dispatcher, Math.max(c.timeout_ms ?? 10_000, 30_000));
  }

  async #client(): Promise<{ client: S3Client; sdk: AwsSdk }> {
    // read at every batch: a deleted secret throws SecretUnavailableError here (fail closed)
    const accessKeyId = await this.ctx.secret(this.c.access_key_id_secret);
    const secretAccessKey = await this.ctx.secret(this.c.secret_access_key_secret);
    const sessionToken = this.c.session_token_secret === undefined ? undefined : await this.ctx.secret(this.c.session_token_secret);
    const sdk = await loadSdk();
    const client = new sdk.S3Client({
      endpoint: this.c.url,
      region: this.c.region ?? 'us-east-1',
      forcePathStyle: this.c.force_path_style ?? false,
      credentials: { accessKeyId, secretAccessKey, ...(sessionToken !== undefined ? { sessionToken } : {}) },
      requestHandler: this.#handler as never,
      // S3-compatible stores differ on flexible checksums; we send the SHA-256 ourselves
      requestChecksumCalculation: 'WHEN_REQUIRED',
      responseChecksumValidation: 'WHEN_REQUIRED',
      maxAttempts: 1, // the delivery engine owns retries
    });
    return { client, sdk };
  }

  async send(items: readonly SinkItem[], signal: AbortSignal): Promise<SinkResult> {
    const { client, sdk } = await this.#client();
    const prefix = this.c.prefix ?? 'svc-audit';
    const artifacts: NonNullable<SinkResult['artifacts']> = [];
    try {
      for (const [tenant, group] of byTenant(items)) {
        const body = gzipSync(joinLines(group.map((i) => i.line)));
        const sha = createHash('sha256').update(body).digest();
        const key = objectKey(prefix, tenant, group);
        const params = {
          Bucket: this.c.bucket,
          Key: key,
          Body: body,
          ContentType: 'application/gzip',
          Metadata: {
            sha256: sha.toString('hex'),
            items: String(group.length),
            ...(group[0]?.seq !== undefined ? { 'first-seq': String(group[0].seq), 'last-seq': String(group[group.length - 1]?.seq) } : {}),
          },
          ...(this.c.server_side_encryption !== undefined ? { ServerSideEncryption: this.c.server_side_encryption } : {}),
        };
        if (body.length <= (this.c.multipart_threshold_bytes ?? 16 * MIB)) {
          await client.send(new sdk.PutObjectCommand({ ...params, ChecksumSHA256: sha.toString('base64') }), { abortSignal: signal });
        } else {
          const upload = new sdk.Upload({
            client,
            params,
            partSize: this.c.part_size_bytes ?? 8 * MIB,
            queueSize: 2,
            leavePartsOnError: false,
          });
          const onAbort = (): void => void upload.abort();
          signal.addEventListener('abort', onAbort, { once: true });
          try {
            await upload.done();
          } finally {
            signal.removeEventListener('abort', onAbort);
          }
        }
        artifacts.push({ key, sha256: sha.toString('hex'), items: group.length, bytes: body.length });
      }
    } catch (err) {
      return s3Failure(err, signal);
    } finally {
      client.destroy();
    }
    return { result: 'delivered', status: 200, artifacts };
  }

  async close(): Promise<void> {
    await this.#dispatcher.close();
  }
}

export const s3ArchiveKind: ConnectorKind<S3ArchiveConfig> = {
  kind: 's3archive',
  format: { surface: 'notification' },
  configSchema: s3ArchiveConfigSchema,
  secretFields: ['access_key_id_secret', 'secret_access_key_secret', 'session_token_secret'],
  validate(c) {
    const out = validateEndpoint(c);
    if ((c.part_size_bytes ?? 8 * MIB) > (c.multipart_threshold_bytes ?? 16 * MIB))
      out.push('part_size_bytes must not exceed multipart_threshold_bytes');
    if (c.bucket.includes('..')) out.push('bucket must not contain ".."');
    return out;
  },
  maxBatch: 5000,
  async open(c, ctx) {
    await ctx.secret(c.access_key_id_secret);
    await ctx.secret(c.secret_access_key_secret);
    if (c.session_token_secret !== undefined) await ctx.secret(c.session_token_secret);
    return new S3ArchiveSink(c, ctx);
  },
};
