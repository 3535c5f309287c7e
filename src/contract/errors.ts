/**
 * The error catalog: every stable `error.code`, its HTTP status and default message
 * (DECISIONS.md "Error codes"). A code is never renamed or reused; a retired code stays here
 * marked `retired` so nobody hands it out again. test/contract/errors.test.ts holds
 * docs/errors.md and this table to each other in both directions.
 */

export interface ErrorSpec {
  status: number;
  message: string;
  retired?: boolean;
}

export const ERROR_CATALOG = {
  bad_request: { status: 400, message: 'bad request' },
  weak_password: { status: 400, message: 'password does not meet the policy' },
  egress_refused: { status: 400, message: 'the destination is not reachable under the egress guard' },
  unauthenticated: { status: 401, message: 'authentication required' },
  forbidden: { status: 403, message: 'forbidden' },
  role_ceiling: { status: 403, message: 'cannot grant above your own role' },
  step_up_required: { status: 403, message: 'this operation requires a step-up to AAL3' },
  workspace_confined: { status: 403, message: 'outside the workspace' },
  not_found: { status: 404, message: 'not found' },
  method_not_allowed: { status: 405, message: 'method not allowed' },
  request_timeout: { status: 408, message: 'request timed out' },
  conflict: { status: 409, message: 'conflict' },
  setup_required: { status: 409, message: 'setup required: redeem the one-time setup token with POST /v1/setup' },
  setup_complete: { status: 409, message: 'setup is already complete' },
  last_superadmin: { status: 409, message: 'the last active superadmin cannot be disabled' },
  approval_required: { status: 409, message: 'this action needs an approval under dual control' },
  ambiguous: { status: 409, message: 'the reference names more than one record; give one of their ids' },
  legal_hold: { status: 409, message: 'a legal hold covers what this request would delete or erase' },
  approval_invalid: {
    status: 409,
    message: 'the approval cannot authorise this action (expired, consumed, not approved, or the plan changed)',
  },
  sso_identity_conflict: { status: 409, message: 'the account is linked to another identity at the OpenID provider' },
  request_body_too_large: { status: 413, message: 'request body too large' },
  unsupported_media_type: { status: 415, message: 'request body must be application/json' },
  tenant_suspended: { status: 423, message: 'tenant is suspended' },
  rate_limited: { status: 429, message: 'rate limited' },
  locked_out: { status: 429, message: 'too many failed attempts; try again later' },
  internal: { status: 500, message: 'internal error' },
  not_configured: { status: 501, message: 'not configured' },
  unavailable: { status: 503, message: 'service unavailable' },
  audit_spool_full: { status: 503, message: 'audit ledger cannot accept records right now' },
  audit_chain_damaged: { status: 503, message: 'the audit chain is damaged and takes no records until an operator has looked' },
} as const satisfies Record<string, ErrorSpec>;

export type ErrorCode = keyof typeof ERROR_CATALOG;

/** An error that becomes the `{"error":{"code","message"}}` envelope with the catalog's status. */
export class ApiError extends Error {
  readonly code: ErrorCode;
  readonly status: number;
  readonly headers: Record<string, string>;

  constructor(code: ErrorCode, message?: string, headers: Record<string, string> = {}) {
    super(message ?? ERROR_CATALOG[code].message);
    this.name = 'ApiError';
    this.code = code;
    this.status = ERROR_CATALOG[code].status;
    this.headers = headers;
  }

  /** The wire envelope. A 500 never carries detail: that goes to the log only. */
  toEnvelope(): { error: { code: string; message: string } } {
    const message = this.code === 'internal' ? ERROR_CATALOG.internal.message : this.message;
    return { error: { code: this.code, message } };
  }
}

/** Factory helpers, so call sites read as the domain: `errors.notFound('agent')`. */
export const errors = {
  badRequest: (message: string) => new ApiError('bad_request', message),
  unauthenticated: (message?: string) => new ApiError('unauthenticated', message),
  forbidden: (message?: string) => new ApiError('forbidden', message),
  notFound: (what?: string) => new ApiError('not_found', what ? `${what} not found` : undefined),
  conflict: (message: string) => new ApiError('conflict', message),
  bodyTooLarge: (limit: number) => new ApiError('request_body_too_large', `request body exceeds ${limit} bytes`),
  internal: () => new ApiError('internal'),
  unavailable: (message?: string) => new ApiError('unavailable', message),
};

/** Every code the service can answer with, for docs and OpenAPI. */
export function errorCodes(): ErrorCode[] {
  return Object.keys(ERROR_CATALOG) as ErrorCode[];
}
