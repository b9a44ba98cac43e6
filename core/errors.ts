/**
 * The one error family of the project. Every refusal carries a stable string code that the CLI
 * prints and the coordinator maps to an HTTP status here, in one table, so a code means the same
 * thing to a contributor's browser, an auditor's terminal and a test.
 */

/** Stable error codes and the HTTP status each maps to. Add new codes here, never elsewhere. */
export const ERROR_STATUS = {
  // Input files and usage
  'usage.invalid_arguments': 400,
  'input.file_not_found': 404,
  'input.not_json': 400,
  'input.invalid': 400,

  // Ceremony configuration and setup
  'config.not_found': 500,
  'config.invalid': 500,
  'circuit.unknown': 404,
  'r1cs.malformed': 500,
  'circuit.public_inputs_mismatch': 500,
  'ptau.malformed': 500,
  'ptau.not_prepared': 500,
  'ptau.too_small': 500,
  'ptau.insecure': 500,

  // Ceremony state
  'ceremony.already_initialised': 409,
  'ceremony.not_initialised': 409,
  'ceremony.locked': 409,
  'ceremony.finalised': 409,
  'transcript.corrupt': 500,
  'chain.file_missing': 500,
  'chain.file_unreadable': 500,
  'chain.file_hash_mismatch': 500,
  /** The audit: a published contribution 0 is not what `zkey new` makes of the r1cs and the ptau. */
  'audit.initial_key_mismatch': 500,

  // A candidate zkey that is refused as the next link of a chain
  'zkey.malformed': 422,
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
  'contribution.invalid': 422,

  // Finalisation
  'finalise.bad_beacon': 400,
  'finalise.bad_iterations': 400,
  'finalise.no_contributions': 409,
  'finalise.beacon_mismatch': 409,
  'finalise.verification_failed': 500,

  // Coordinator server: requests, sign-in, lobby, uploads
  'request.invalid': 400,
  'not_found': 404,
  'manifest.not_finalised': 404,
  'auth.required': 401,
  'auth.below_minimum': 403,
  'auth.github_failed': 502,
  'auth.invalid_proof': 401,
  'auth.challenge_unknown': 401,
  'auth.wrong_scope': 401,
  'auth.unknown_root': 401,
  'auth.nullifier_used': 409,
  'auth.not_coordinator': 403,
  'auth.csrf': 403,
  'auth.demo_disabled': 403,
  'ceremony.not_open': 409,
  'lobby.already_contributed': 409,
  'lobby.not_your_turn': 409,
  'lobby.cooldown': 429,
  'upload.too_large': 413,
  'upload.incomplete': 400,
  'upload.too_small': 400,
  'upload.length_required': 411,
  'upload.submitting': 409,
  'upload.disk_full': 507,
  'upload.failed': 500,
  'contribution.not_next': 409,
  'verification.unavailable': 503,
  'auth.root_expired': 401,
  'rate.limited': 429,
  'lobby.not_queued': 404,
  'metrics.forbidden': 403,
  'publish.out_exists': 409,
} as const;

export type ErrorCode = keyof typeof ERROR_STATUS;

export class CoordinatorError extends Error {
  override readonly name = 'CoordinatorError';

  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly details?: Record<string, unknown>,
  ) {
    super(message);
  }

  get httpStatus(): number {
    return ERROR_STATUS[this.code];
  }

  toJSON(): { error: { code: ErrorCode; message: string } } {
    return { error: { code: this.code, message: this.message } };
  }
}

export function isCoordinatorError(error: unknown, code?: ErrorCode): error is CoordinatorError {
  return error instanceof CoordinatorError && (code === undefined || error.code === code);
}
