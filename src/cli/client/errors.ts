import { ExitCode, exitCodeForStatus, exitCodeForTransport } from './exit-codes.js';
import type { ExitCodeValue, TransportFailure } from './exit-codes.js';

/**
 * An error the CLI reports as one line (`svc: <code>: <message>`) and turns into an exit code.
 *
 * `code` is a stable snake_case word: the server's `error.code` for API errors, or one of the
 * client's own (`usage`, `unreachable`, `timeout`, `tls_error`, `tls_pin_mismatch`,
 * `cleartext_refused`, `insecure_config`, `bad_response`, `degraded`).
 */
export class CliError extends Error {
  readonly exitCode: ExitCodeValue;
  readonly code: string;

  constructor(exitCode: ExitCodeValue, code: string, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'CliError';
    this.exitCode = exitCode;
    this.code = code;
  }
}

/** A wrong invocation (exit 2). */
export class CliUsageError extends CliError {
  constructor(message: string) {
    super(ExitCode.Usage, 'usage', message);
    this.name = 'CliUsageError';
  }
}

/** A non-2xx answer from the server, carrying the error envelope's code and message. */
export class ApiError extends CliError {
  readonly status: number;

  constructor(status: number, code: string, message: string) {
    super(exitCodeForStatus(status), code, message);
    this.name = 'ApiError';
    this.status = status;
  }
}

/** The server could not be reached or trusted (exit 6). */
export class TransportError extends CliError {
  readonly failure: TransportFailure;

  constructor(failure: TransportFailure, message: string, options?: { cause?: unknown }) {
    super(exitCodeForTransport(failure), failure, message, options);
    this.name = 'TransportError';
    this.failure = failure;
  }
}
