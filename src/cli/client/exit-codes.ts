/**
 * Process exit codes of the `svc` client (spec "Client exit codes").
 *
 * These values are a public contract that scripts depend on: they are never renumbered and a
 * retired code stays reserved; new codes are only appended (same rule as berry's MessageName).
 */
export const ExitCode = {
  /** Success. */
  OK: 0,
  /** Generic failure (including 400, 413, 422, 423, 429 and any other 4xx not listed below). */
  Err: 1,
  /** Wrong invocation: unknown command, bad flag, missing input, refused unsafe option. */
  Usage: 2,
  /** Rejected with 401 or 403. */
  Auth: 3,
  /** 404. */
  NotFound: 4,
  /** 409. */
  Conflict: 5,
  /** 5xx, or the server could not be reached (DNS, refused, TLS failure, timeout). */
  Server: 6,
  /** The call succeeded but reports a degraded or failing condition (status not fully ok…). */
  Degraded: 7,
  /** No verdict possible because a needed input is unknown; never to be read as clean. */
  Indeterminate: 8,
} as const;

/** One of the values of {@link ExitCode}. */
export type ExitCodeValue = (typeof ExitCode)[keyof typeof ExitCode];

/**
 * Maps an HTTP status of a non-2xx answer to an exit code.
 *
 * The spec table names only 401/403, 404, 409 and 5xx. Every other non-2xx status (400 bad request,
 * 413 body too large, 422, 423 tenant suspended, 429 rate limited, and stray 1xx/3xx since the
 * client follows no redirects) is a generic failure (1): the error code printed with it tells them
 * apart, and giving them their own numbers would be a renumbering hazard later.
 */
export function exitCodeForStatus(status: number): ExitCodeValue {
  if (status >= 200 && status < 300) return ExitCode.OK;
  if (status === 401 || status === 403) return ExitCode.Auth;
  if (status === 404) return ExitCode.NotFound;
  if (status === 409) return ExitCode.Conflict;
  if (status >= 500 && status < 600) return ExitCode.Server;
  return ExitCode.Err;
}

/** Transport failure kinds the HTTP client reports; all of them mean "server not reached". */
export type TransportFailure = 'unreachable' | 'timeout' | 'tls_error' | 'tls_pin_mismatch';

/**
 * Maps a transport failure to an exit code: always 6 (Server), spec "5xx or unreachable".
 *
 * A TLS pin mismatch is 6 too, not 3: no credential was sent or judged, the client simply could not
 * establish a trusted connection to the server it was pointed at.
 */
export function exitCodeForTransport(_failure: TransportFailure): ExitCodeValue {
  return ExitCode.Server;
}
