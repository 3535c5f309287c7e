/**
 * The gRPC listener of `svc serve` (@grpc/grpc-js). Today it carries `grpc.health.v1.Health`;
 * ControlPlane and ingest register here when they land. TLS with the same certificate as HTTP;
 * plaintext only under `--insecure` (refused earlier by config on a non-loopback bind).
 */
import { Server, ServerCredentials } from '@grpc/grpc-js';
import { HealthImplementation } from 'grpc-health-check';
import type { Logger } from 'pino';

export interface GrpcOptions {
  host: string;
  port: number;
  /** null means plaintext, which only `--insecure` may ask for */
  tls: { certPem: string; keyPem: string } | null;
  log: Logger;
}

export interface RunningGrpc {
  port: number;
  health: HealthImplementation;
  /** graceful stop, then force after `graceMs` */
  close(graceMs?: number): Promise<void>;
}

/** Bind the gRPC server; rejects when the port cannot be bound. */
export async function startGrpc(opts: GrpcOptions): Promise<RunningGrpc> {
  const server = new Server({ 'grpc.max_receive_message_length': 4 * 1024 * 1024 });
  const health = new HealthImplementation({ '': 'SERVING' });
  health.addToServer(server);
  const creds = opts.tls
    ? ServerCredentials.createSsl(null, [{ cert_chain: Buffer.from(opts.tls.certPem), private_key: Buffer.from(opts.tls.keyPem) }], false)
    : ServerCredentials.createInsecure();
  const addr = opts.host.includes(':') ? `[${opts.host}]:${opts.port}` : `${opts.host}:${opts.port}`;
  const port = await new Promise<number>((resolve, reject) => {
    server.bindAsync(addr, creds, (err, p) => (err ? reject(new Error(`cannot listen for gRPC on ${addr}: ${err.message}`)) : resolve(p)));
  });
  return {
    port,
    health,
    close: (graceMs = 5_000) =>
      new Promise<void>((resolve) => {
        health.setStatus('', 'NOT_SERVING');
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
