/**
 * `olivares.api.v1.Ingest/Push` (ingest.proto): a bidirectional stream of batches and acks.
 * Authenticated once when the stream opens (identity's authenticator, `ingest:write`), the
 * credential re-checked before each batch. At most MAX_AHEAD batches per stream are committing at
 * once; beyond that the stream is paused, so grpc-js stops reading and HTTP/2 flow control pushes
 * back on the collector instead of the core buffering without bound.
 */
import type { ServerDuplexStream, UntypedServiceImplementation } from '@grpc/grpc-js';
import { ApiError } from '../contract/errors.js';
import type { Authenticator } from '../http/app.js';
import type { Services } from '../serve/services.js';
import { authenticateCall, credentialStillValid, grpcRoute, type CallIdentity } from './call-auth.js';
import { peerAddress } from './control-plane.js';
import { commitBatch, type Ack } from './ingest-commit.js';
import type { BatchMessage } from './ingest-items.js';
import { serviceError, toServiceError } from './status.js';

export const INGEST_METHOD = '/olivares.api.v1.Ingest/Push';
export const INGEST_PERMISSION = 'ingest:write';
/** Batches of one stream committing at once before reading pauses. */
export const MAX_AHEAD = 4;

const ROUTE = grpcRoute(INGEST_METHOD, INGEST_PERMISSION);

/** The Ingest implementation. */
export function ingestService(services: Services, authenticate: Authenticator): UntypedServiceImplementation {
  return {
    Push: (call: ServerDuplexStream<BatchMessage, Ack>) => {
      const log = services.log.child({ grpc: 'ingest', peer: call.getPeer() });
      call.pause();
      let who: CallIdentity | undefined;
      let inflight = 0;
      let ended = false;
      let failed = false;
      const fail = (err: unknown): void => {
        if (failed) return;
        failed = true;
        if (!(err instanceof ApiError)) log.error({ err }, 'ingest batch could not be committed');
        // Not committed, not acked: the collector keeps the batch and re-sends it after a reconnect.
        const e = err instanceof ApiError ? toServiceError(err) : serviceError(503, 'unavailable', 'batch not committed; retry');
        call.emit('error', e);
      };
      const maybeFinish = (): void => {
        if (ended && inflight === 0 && !failed) call.end();
      };
      call.on('cancelled', () => {
        failed = true;
      });
      call.on('error', () => {
        failed = true;
      });
      call.on('data', (batch: BatchMessage) => {
        if (failed || !who) return;
        const id = who;
        inflight++;
        if (inflight >= MAX_AHEAD) call.pause();
        void (async () => {
          try {
            if (!(await credentialStillValid(services, id))) throw new ApiError('unauthenticated', 'invalid or expired credential');
            const ack = await commitBatch(services, id, batch);
            if (!failed) call.write(ack);
          } catch (err) {
            fail(err);
          } finally {
            inflight--;
            if (!failed && inflight < MAX_AHEAD) call.resume();
            maybeFinish();
          }
        })();
      });
      call.on('end', () => {
        ended = true;
        maybeFinish();
      });
      authenticateCall(services, authenticate, ROUTE, call.metadata, peerAddress(call.getPeer())).then(
        (id) => {
          who = id;
          log.debug({ tenant: id.tenant, actor: id.principal.actor }, 'ingest stream open');
          call.resume();
        },
        (err: unknown) => fail(err),
      );
    },
  };
}
