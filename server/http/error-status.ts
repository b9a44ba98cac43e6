/**
 * The HTTP status of every error code: the status of its kind (core/error-codes/error-entry.ts),
 * unless HTTP has a status of its own for the code. The coordinator answers a code with the same
 * status wherever it is raised (routes, uploads, the error handler).
 */
import { ALL_ERROR_CODES, errorKind, type ErrorCode, type ErrorKind } from '../../core/errors.ts';

const KIND_STATUS: Readonly<Record<ErrorKind, number>> = {
  usage: 400,
  caller: 400,
  conflict: 409,
  refusal: 422,
  limit: 429,
  unavailable: 503,
  upstream: 502,
  operator: 500,
};

/** Codes whose meaning HTTP names more exactly than their kind's status does. */
const STATUS_OVERRIDES: Readonly<Partial<Record<ErrorCode, number>>> = {
  // Not signed in, or signed in with a proof that does not hold: the client should sign in (again).
  'auth.required': 401,
  'auth.invalid_proof': 401,
  'auth.challenge_unknown': 401,
  'auth.wrong_scope': 401,
  'auth.unknown_root': 401,
  'auth.root_expired': 401,

  // Signed in (or known), and still not allowed.
  'auth.below_minimum': 403,
  'auth.not_coordinator': 403,
  'auth.csrf': 403,
  'auth.demo_disabled': 403,
  'metrics.forbidden': 403,
  // RFC 8628 answers the device flow's four with 400; ours says more: not yet (the kind's 400), too
  // often (a limit), gone, refused.
  'auth.device_expired': 410,
  'auth.device_denied': 403,

  'input.file_not_found': 404,
  'circuit.unknown': 404,
  not_found: 404,
  'manifest.not_finalised': 404,
  'lobby.not_queued': 404,
  // tus answers an upload it does not hold with 404, and a missing Upload-Length with 411.
  'upload.not_found': 404,
  'upload.length_required': 411,

  'request.too_large': 413,
  'upload.too_large': 413,
  'upload.disk_full': 507,
};

/** Every code's status, for a test or a table keyed by code. */
export const ERROR_STATUS: Readonly<Record<ErrorCode, number>> = Object.fromEntries(
  ALL_ERROR_CODES.map((code) => [code, STATUS_OVERRIDES[code] ?? KIND_STATUS[errorKind(code)]]),
) as Record<ErrorCode, number>;

export function errorStatus(code: ErrorCode): number {
  return ERROR_STATUS[code];
}
