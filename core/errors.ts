/**
 * The one error family of the project, and the one list of its codes. Every refusal carries a
 * stable string code that the CLI prints, the coordinator sends and the browser explains, so a code
 * means the same thing to a contributor's browser, an auditor's terminal and a test. Each code is
 * declared once, in its family's table under core/error-codes/, with its kind (is it the caller's
 * mistake? a conflict with the ceremony's state? the operator's problem?), whether it is a verdict
 * on a contribution, and its plain words; this module composes the families into the one table.
 * The HTTP status of each kind is the server's business (server/http/error-status.ts).
 *
 * Three codes say "you asked wrongly", one per caller:
 *  - `usage.invalid_arguments`: the command line of `ceremony …` (arguments, options);
 *  - `input.*`: a file a command was given to read (missing, not JSON, not the shape it must have);
 *  - `request.invalid`: an HTTP request to the coordinator (body, parameters, query).
 */

import type { ErrorEntry, ErrorKind } from './error-codes/error-entry.ts';
import { USAGE_CODES } from './error-codes/usage.ts';
import { SETUP_CODES } from './error-codes/setup.ts';
import { CEREMONY_STATE_CODES } from './error-codes/ceremony-state.ts';
import { DEPLOYMENT_CODES } from './error-codes/deployment.ts';
import { CONTRIBUTION_REFUSAL_CODES } from './error-codes/contribution-refusals.ts';
import { FINALISATION_CODES } from './error-codes/finalisation.ts';
import { REQUEST_AND_SIGN_IN_CODES } from './error-codes/requests-and-sign-in.ts';
import { LIMIT_LOBBY_UPLOAD_CODES } from './error-codes/limits-lobby-uploads.ts';
import { TOOL_CODES } from './error-codes/tools.ts';
import { RECEIPT_CODES } from './error-codes/receipts.ts';

export type { ErrorEntry, ErrorKind };

/**
 * Every error code. A new code goes into its family's table, never elsewhere; the order here is the
 * order of docs/error-codes.md.
 */
const ERROR_CODES = {
  ...USAGE_CODES,
  ...SETUP_CODES,
  ...CEREMONY_STATE_CODES,
  ...DEPLOYMENT_CODES,
  ...CONTRIBUTION_REFUSAL_CODES,
  ...FINALISATION_CODES,
  ...REQUEST_AND_SIGN_IN_CODES,
  ...LIMIT_LOBBY_UPLOAD_CODES,
  ...TOOL_CODES,
  ...RECEIPT_CODES,
};

export type ErrorCode = keyof typeof ERROR_CODES;

/** Every code, in the table's order (for tables keyed by code, and their tests). */
export const ALL_ERROR_CODES = Object.keys(ERROR_CODES) as readonly ErrorCode[];

/** Each code's declaration: its kind, whether it refuses a contribution, its plain words. */
export const ERROR_ENTRIES: Readonly<Record<ErrorCode, ErrorEntry>> = ERROR_CODES;

/** True for a code of the table; for codes read from outside (a queue's failure text, an old database row). */
export function isErrorCode(value: unknown): value is ErrorCode {
  return typeof value === 'string' && Object.hasOwn(ERROR_CODES, value);
}

/**
 * `value` if it is a code of the table, else `fallback`: a code that crossed a process or a
 * database (written by another version, or damaged) is checked, never cast.
 */
export function errorCodeOr(value: unknown, fallback: ErrorCode): ErrorCode {
  return isErrorCode(value) ? value : fallback;
}

/** See ErrorEntry.refusesContribution. */
export function refusesContribution(code: ErrorCode): boolean {
  return ERROR_ENTRIES[code].refusesContribution === true;
}

/** The caller asked wrongly (command-line arguments or an input file): the CLI exits 2, not 1. */
export function isUsageError(code: ErrorCode): boolean {
  return ERROR_ENTRIES[code].kind === 'usage';
}

export function errorKind(code: ErrorCode): ErrorKind {
  return ERROR_ENTRIES[code].kind;
}

export class CoordinatorError extends Error {
  override readonly name = 'CoordinatorError';

  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly details?: Record<string, unknown>,
  ) {
    super(message);
  }

  toJSON(): { error: { code: ErrorCode; message: string } } {
    return { error: { code: this.code, message: this.message } };
  }
}

export function isCoordinatorError(error: unknown, code?: ErrorCode): error is CoordinatorError {
  return error instanceof CoordinatorError && (code === undefined || error.code === code);
}
