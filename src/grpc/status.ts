/**
 * HTTP status → gRPC status code (DECISIONS.md "gRPC": 401 Unauthenticated, 403 PermissionDenied,
 * 404 NotFound, 400 InvalidArgument, 409 Aborted, 429 ResourceExhausted; the rest follows the
 * gRPC status-code guide's HTTP mapping in spirit). The REST error code rides along in trailing
 * metadata so clients can tell `step_up_required` from `forbidden`.
 */
import { Metadata, status, type ServiceError } from '@grpc/grpc-js';
import { ApiError } from '../contract/errors.js';

/** The gRPC code for an HTTP status. */
export function grpcCodeFor(httpStatus: number): status {
  switch (httpStatus) {
    case 400:
    case 415:
      return status.INVALID_ARGUMENT;
    case 401:
      return status.UNAUTHENTICATED;
    case 403:
      return status.PERMISSION_DENIED;
    case 404:
      return status.NOT_FOUND;
    case 409:
      return status.ABORTED;
    case 413:
    case 429:
      return status.RESOURCE_EXHAUSTED;
    case 423:
      return status.FAILED_PRECONDITION;
    case 501:
      return status.UNIMPLEMENTED;
    case 503:
      return status.UNAVAILABLE;
    case 504:
      return status.DEADLINE_EXCEEDED;
    default:
      return httpStatus >= 200 && httpStatus < 300 ? status.OK : status.INTERNAL;
  }
}

/** A grpc-js ServiceError from an HTTP status, error code and message. */
export function serviceError(httpStatus: number, code: string, message: string): Partial<ServiceError> {
  const metadata = new Metadata();
  metadata.set('svc-error-code', code);
  return { code: grpcCodeFor(httpStatus), details: message, metadata };
}

/** A grpc-js ServiceError for anything thrown; non-ApiErrors become INTERNAL "internal error". */
export function toServiceError(err: unknown): Partial<ServiceError> {
  if (err instanceof ApiError) return serviceError(err.status, err.code, err.toEnvelope().error.message);
  return serviceError(500, 'internal', 'internal error');
}
