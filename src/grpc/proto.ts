/**
 * Loads the `.proto` files under `proto/` (package `olivares.api.v1`, spec item 7) with
 * @grpc/proto-loader, once per process. The same definitions feed the server, server reflection
 * and the collector's client, so the wire shapes have a single source.
 */
import path from 'node:path';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { loadSync, type Options, type PackageDefinition, type ProtobufTypeDefinition } from '@grpc/proto-loader';
import { loadPackageDefinition, type GrpcObject, type ServiceClientConstructor, type ServiceDefinition } from '@grpc/grpc-js';

/** `proto/` at the repository root: src/grpc → ../../proto, dist/src/grpc → ../../../proto. */
function protoRoot(): string {
  const here = path.dirname(fileURLToPath(import.meta.url));
  const fromDist = path.resolve(here, '../../../proto');
  const fromSrc = path.resolve(here, '../../proto');
  return here.split(path.sep).includes('dist') ? fromDist : fromSrc;
}

const require = createRequire(import.meta.url);

export const PROTO_FILES = ['olivares/api/v1/control_plane.proto', 'olivares/api/v1/ingest.proto'] as const;

// keepCase: field names exactly as in the .proto (snake_case, like the REST JSON); int64 as
// Number (ledger seqs stay far below 2^53); defaults so absent proto3 fields read as '' / 0.
const OPTIONS: Options = { keepCase: true, longs: Number, enums: String, defaults: true, arrays: true, oneofs: true };

let cached: { definition: PackageDefinition; grpc: GrpcObject } | undefined;

/** The loaded definitions (also what server reflection describes) and the grpc object tree. */
export function protos(): { definition: PackageDefinition; grpc: GrpcObject } {
  if (cached) return cached;
  const definition = loadSync([...PROTO_FILES], { ...OPTIONS, includeDirs: [protoRoot()] });
  cached = { definition, grpc: loadPackageDefinition(definition) };
  return cached;
}

let health: PackageDefinition | undefined;

/**
 * The definitions server reflection describes: ours and `grpc.health.v1` (the health.proto that
 * grpc-health-check ships and serves), so generic clients can list and call every service the
 * server offers. Loaded with the same options, as a set of its own: each set's file descriptors
 * name their own files, so nothing is described twice.
 */
export function reflectedDefinitions(): PackageDefinition {
  if (!health) {
    health = loadSync('health/v1/health.proto', {
      ...OPTIONS,
      includeDirs: [path.join(path.dirname(require.resolve('grpc-health-check/package.json')), 'proto')],
    });
    for (const d of Object.values(health))
      if ('format' in d)
        (d as ProtobufTypeDefinition).fileDescriptorProtos = (d as ProtobufTypeDefinition).fileDescriptorProtos.map(protocMapEntries);
  }
  return { ...protos().definition, ...health };
}

interface MessageDescriptor {
  name: string;
  field: Array<{ name: string; typeName?: string }>;
  nestedType: MessageDescriptor[];
  options?: { mapEntry?: boolean } | null;
}

/**
 * protobufjs names a map field's entry message after the field (`Statuses`, in health.proto's
 * `List`); protoc, and the descriptor validation `buf curl` runs, require `<Field>Entry`
 * (`StatusesEntry`) and reject the whole file otherwise. Renames the entries and their
 * references in one file descriptor. The decoder is the one @grpc/reflection itself reads the
 * descriptors with.
 */
function protocMapEntries(bin: Buffer): Buffer {
  const { FileDescriptorProto } = createRequire(require.resolve('@grpc/reflection'))('protobufjs/ext/descriptor') as {
    FileDescriptorProto: { decode(b: Uint8Array): { messageType: MessageDescriptor[] }; encode(f: unknown): { finish(): Uint8Array } };
  };
  const file = FileDescriptorProto.decode(bin);
  const visit = (m: MessageDescriptor): void => {
    for (const nested of m.nestedType) {
      if (!nested.options?.mapEntry) continue;
      const field = m.field.find((f) => f.typeName === nested.name);
      if (!field) continue;
      nested.name = `${field.name.replace(/(?:^|_)([a-z])/g, (_, c: string) => c.toUpperCase())}Entry`;
      field.typeName = nested.name;
    }
    m.nestedType.forEach(visit);
  };
  file.messageType.forEach(visit);
  return Buffer.from(FileDescriptorProto.encode(file).finish());
}

/** A service of package olivares.api.v1 by name: its client constructor (with `.service`). */
export function serviceClient(name: 'ControlPlane' | 'Ingest'): ServiceClientConstructor {
  const pkg = ((protos().grpc['olivares'] as GrpcObject)['api'] as GrpcObject)['v1'] as GrpcObject;
  return pkg[name] as ServiceClientConstructor;
}

/** The server-side definition of a service. */
export function serviceDefinition(name: 'ControlPlane' | 'Ingest'): ServiceDefinition {
  return serviceClient(name).service;
}
