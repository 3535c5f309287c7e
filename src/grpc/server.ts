/**
 * The gRPC listener of `svc serve` (@grpc/grpc-js): `olivares.api.v1.ControlPlane`,
 * `olivares.api.v1.Ingest`, `grpc.health.v1.Health` and server reflection (v1 and v1alpha) so
 * generic clients such as `buf curl` work. TLS with the same certificate as HTTP; plaintext only
 * under `--insecure` (refused earlier by config on a non-loopback bind). With a client CA
 * (`--grpc-client-ca`) the handshake demands a client certificate that chains to it.
 */
import { lookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import { Server, ServerCredentials } from '@grpc/grpc-js';
import { ReflectionService } from '@grpc/reflection';
import { HealthImplementation } from 'grpc-health-check';
import type { Logger } from 'pino';
import type { Authenticator } from '../http/app.js';
import type { Services } from '../serve/services.js';
import { controlPlaneService, type AppHandle } from './control-plane.js';
import { ingestService } from './ingest-service.js';
import { reflectedDefinitions, serviceDefinition } from './proto.js';

/** Largest message either way; a bigger one ends its stream with RESOURCE_EXHAUSTED. */
export const GRPC_MAX_MESSAGE = 4 * 1024 * 1024;

export interface GrpcOptions {
  host: string;
  port: number;
  /** null means plaintext, which only `--insecure` may ask for */
  tls: { certPem: string; keyPem: string } | null;
  /** PEM bundle of CAs a client certificate must chain to; set: mutual TLS is required */
  clientCaPem?: string | null;
  log: Logger;
  /** ControlPlane and Ingest need the app and the identity seam; without them only Health runs */
  app?: AppHandle;
  services?: Services;
  authenticate?: Authenticator;
}

export interface RunningGrpc {
  port: number;
  health: HealthImplementation;
  /** the fully-qualified services served */
  services: string[];
  /** graceful stop, then force after `graceMs` */
  close(graceMs?: number): Promise<void>;
}

/** Bind the gRPC server; rejects when the port cannot be bound. */
export async function startGrpc(opts: GrpcOptions): Promise<RunningGrpc> {
  if (opts.clientCaPem && !opts.tls) throw new Error('--grpc-client-ca needs TLS (it cannot be combined with --insecure)');
  const server = new Server({ 'grpc.max_receive_message_length': GRPC_MAX_MESSAGE, 'grpc.max_send_message_length': GRPC_MAX_MESSAGE });
  const health = new HealthImplementation({ '': 'SERVING' });
  health.addToServer(server);
  const names = ['grpc.health.v1.Health'];
  if (opts.app && opts.services && opts.authenticate) {
    server.addService(serviceDefinition('ControlPlane'), controlPlaneService(opts.app));
    server.addService(serviceDefinition('Ingest'), ingestService(opts.services, opts.authenticate));
    names.push('olivares.api.v1.ControlPlane', 'olivares.api.v1.Ingest');
    for (const n of names) health.setStatus(n, 'SERVING');
  }
  new ReflectionService(reflectedDefinitions()).addToServer(server);
  names.push('grpc.reflection.v1.ServerReflection', 'grpc.reflection.v1alpha.ServerReflection');
  const creds = opts.tls
    ? ServerCredentials.createSsl(
        opts.clientCaPem ? Buffer.from(opts.clientCaPem) : null,
        [{ cert_chain: Buffer.from(opts.tls.certPem), private_key: Buffer.from(opts.tls.keyPem) }],
        // checkClientCertificate: with a client CA, a client without a valid certificate fails the handshake.
        Boolean(opts.clientCaPem),
      )
    : ServerCredentials.createInsecure();
  const hostPort = (host: string, port: number): string => (host.includes(':') ? `[${host}]:${port}` : `${host}:${port}`);
  const addr = hostPort(opts.host, opts.port);
  // A host name is resolved here and every address bound: grpc-js would go on when only some of a
  // name's addresses bind, serving beside another process that holds the rest (issue 30 item 1).
  const targets = isIP(opts.host) !== 0 ? [opts.host] : [...new Set((await lookup(opts.host, { all: true })).map((a) => a.address))];
  let port = opts.port;
  for (const target of targets) {
    port = await new Promise<number>((resolve, reject) => {
      server.bindAsync(hostPort(target, port), creds, (err, p) =>
        err ? reject(new Error(`cannot listen for gRPC on ${addr}: ${err.message}`)) : resolve(p),
      );
    }).catch((err: unknown) => {
      server.forceShutdown();
      throw err;
    });
  }
  return {
    port,
    health,
    services: names,
    close: (graceMs = 5_000) =>
      new Promise<void>((resolve) => {
        for (const n of ['', ...names]) health.setStatus(n, 'NOT_SERVING');
        const force = setTimeout(() => {
          server.forceShutdown();
          resolve();
        }, graceMs);
        server.tryShutdown(() => {
          clearTimeout(force);
          resolve();
        });
      }),
  };
}
