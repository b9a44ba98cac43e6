/**
 * The HTTP status of every error code (core/errors.ts), in one table: the coordinator answers a
 * code with the same status wherever it is raised (routes, uploads, the error handler). Typed as
 * complete, so a new code does not compile until it has a status here.
 */
import type { ErrorCode } from '../../core/errors.ts';

export const ERROR_STATUS = {
  'usage.invalid_arguments': 400,
  'input.file_not_found': 404,
  'input.not_json': 400,
  'input.invalid': 400,

  // A broken configuration or setup is the operator's problem, never the client's.
  'config.not_found': 500,
  'config.invalid': 500,
  'circuit.unknown': 404,
  'r1cs.malformed': 500,
  'circuit.public_inputs_mismatch': 500,
  'ptau.malformed': 500,
  'ptau.not_prepared': 500,
  'ptau.too_small': 500,
  'ptau.insecure': 500,
  'r1cs.hash_mismatch': 500,

  'ceremony.already_initialised': 409,
  'ceremony.not_initialised': 409,
  'ceremony.locked': 409,
  'ceremony.finalised': 409,
  'ceremony.not_open': 409,
  'ceremony.not_closed': 409,
  'ceremony.invalid_phase_change': 409,
  'transcript.corrupt': 500,
  'chain.file_missing': 500,
  'chain.file_unreadable': 500,
  'chain.file_hash_mismatch': 500,
  'audit.initial_key_mismatch': 500,
  'audit.b2_outside_subgroup': 500,
  'audit.ptau_unpinned': 500,
  'audit.ptau_hash_mismatch': 500,
  'audit.ptau_inconsistent': 500,
  'audit.too_few_contributions': 500,
  'vkey.delta_equals_gamma': 500,

  // A refused contribution is well-formed HTTP carrying a file that cannot be the next link.
  'zkey.malformed': 422,
  'delta.malformed': 422,
  'delta.stale_head': 409,
  'zkey.not_groth16': 422,
  'contribution.wrong_circuit': 422,
  'contribution.header_mismatch': 422,
  'contribution.stale': 409,
  'contribution.no_new_contribution': 422,
  'contribution.multiple_new_contributions': 422,
  'contribution.history_mismatch': 422,
  'contribution.unexpected_type': 422,
  'contribution.delta_unchanged': 422,
  'contribution.delta_mismatch': 422,
  'contribution.invalid_proof_of_knowledge': 422,
  'contribution.l_section_invalid': 422,
  'contribution.h_section_invalid': 422,
  'contribution.point_not_on_curve': 422,
  'contribution.identity_pattern_changed': 422,
  'contribution.invalid': 422,
  'contribution.not_next': 409,

  'finalise.bad_beacon': 400,
  'finalise.bad_iterations': 400,
  'finalise.too_few_contributions': 409,
  'finalise.beacon_mismatch': 409,
  'finalise.verification_failed': 500,

  'request.invalid': 400,
  'request.too_large': 413,
  not_found: 404,
  internal: 500,
  'manifest.not_finalised': 404,
  'auth.required': 401,
  'auth.below_minimum': 403,
  'auth.github_failed': 502,
  'auth.invalid_proof': 401,
  'auth.challenge_unknown': 401,
  'auth.wrong_scope': 401,
  'auth.unknown_root': 401,
  'auth.root_expired': 401,
  'auth.not_coordinator': 403,
  'auth.csrf': 403,
  'auth.demo_disabled': 403,
  // RFC 8628 answers all four with 400; ours says more: not yet, too often, gone, refused.
  'auth.device_pending': 400,
  'auth.device_slow_down': 429,
  'auth.device_expired': 410,
  'auth.device_denied': 403,
  'rate.limited': 429,
  'lobby.already_contributed': 409,
  'lobby.not_your_turn': 409,
  'lobby.not_queued': 404,
  'upload.too_large': 413,
  'upload.too_small': 400,
  'upload.length_required': 411,
  'upload.submitting': 409,
  'upload.complete': 409,
  'upload.disk_full': 507,
  'upload.failed': 500,
  'verification.unavailable': 503,
  'metrics.forbidden': 403,
  'lifecycle.illegal_transition': 500,

  'publish.out_exists': 409,

  // Raised by the receipt check (CLI and page), never answered by the coordinator's routes.
  'receipt.malformed': 400,
  'receipt.key_unavailable': 502,
  'receipt.source_unavailable': 502,
  'receipt.other_ceremony': 422,
  'receipt.bad_signature': 422,
  'receipt.not_in_transcript': 422,
  'receipt.not_in_key': 422,
  'receipt.history_invalid': 422,
} as const satisfies Record<ErrorCode, number>;

export function errorStatus(code: ErrorCode): number {
  return ERROR_STATUS[code];
}
