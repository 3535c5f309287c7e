/**
 * Loads the `.proto` files under `proto/` (package `olivares.api.v1`, spec item 7) with
 * @grpc/proto-loader, once per process. The same definitions feed the server, server reflection
 * and the collector's client, so the wire shapes have a single source.
 */
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadSync, type Options, type PackageDefinition } from '@grpc/proto-loader';
import { loadPackageDefinition, type GrpcObject, type ServiceClientConstructor, type ServiceDefinition } from '@grpc/grpc-js';

/** `proto/` at the repository root: src/grpc → ../../proto, dist/src/grpc → ../../../proto. */
function protoRoot(): string {
  const here = path.dirname(fileURLToPath(import.meta.url));
  const fromDist = path.resolve(here, '../../../proto');
  const fromSrc = path.resolve(here, '../../proto');
  return here.split(path.sep).includes('dist') ? fromDist : fromSrc;
}

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

/** A service of package olivares.api.v1 by name: its client constructor (with `.service`). */
export function serviceClient(name: 'ControlPlane' | 'Ingest'): ServiceClientConstructor {
  const pkg = ((protos().grpc['olivares'] as GrpcObject)['api'] as GrpcObject)['v1'] as GrpcObject;
  return pkg[name] as ServiceClientConstructor;
}

/** The server-side definition of a service. */
export function serviceDefinition(name: 'ControlPlane' | 'Ingest'): ServiceDefinition {
  return serviceClient(name).service;
}
