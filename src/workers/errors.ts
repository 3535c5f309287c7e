/** Worker-pool failures as a factory map (after piscina's `errors.ts`), each with a stable code. */

export type WorkerErrorCode = 'pool-closed' | 'aborted' | 'queue-full' | 'unknown-signing-key';

/** A failure of the pool or a worker job, with a stable code for callers to branch on. */
export class WorkerPoolError extends Error {
  override readonly name = 'WorkerPoolError';
  constructor(
    readonly code: WorkerErrorCode,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/** Factories of every {@link WorkerPoolError}. */
export const WorkerErrors = {
  poolClosed: (cause?: unknown) => new WorkerPoolError('pool-closed', 'worker pool is closed', { cause }),
  aborted: (cause?: unknown) => new WorkerPoolError('aborted', 'task aborted', { cause }),
  queueFull: (cause?: unknown) => new WorkerPoolError('queue-full', 'worker pool queue is full', { cause }),
  unknownSigningKey: (keyId: string) => new WorkerPoolError('unknown-signing-key', `worker has no signing key ${keyId}`),
} as const;
