/**
 * How a refusal travels from a BullMQ worker to the coordinator: the worker fails the job with an
 * UnrecoverableError (BullMQ never retries it) whose message is `encodeRefusal(refusal)`, and the
 * coordinator reads the job's `failedReason` back with `decodeRefusal`. The encoding is the JSON
 * object `{"code","message"}`, the form every released worker has written, so jobs finished by a
 * worker of another version (kept in Redis for days) still read as the verdicts they were.
 *
 * A failure reason that is not such an object, or whose code does not refuse a contribution (an
 * I/O error, a malformed job, a code this version does not know), decodes to undefined: it says
 * nothing about the contribution and is handled as an error that may be retried.
 */
import type { ErrorCode } from '../errors.ts';
import { isRefusalCode } from './verifier-contract.ts';

/** A contribution refused by a verifier: one of the codes that refuse (core/errors.ts), and its message. */
export interface Refusal {
  code: ErrorCode;
  message: string;
}

/** The failure reason a worker gives a job whose contribution it refused. */
export function encodeRefusal({ code, message }: Refusal): string {
  return JSON.stringify({ code, message });
}

/** The refusal a job's failure reason carries, or undefined when it carries none. */
export function decodeRefusal(failedReason: string | undefined): Refusal | undefined {
  if (failedReason === undefined) return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(failedReason);
  } catch {
    return undefined;
  }
  if (typeof parsed !== 'object' || parsed === null) return undefined;
  const { code, message } = parsed as Record<string, unknown>;
  if (typeof code !== 'string' || typeof message !== 'string' || !isRefusalCode(code)) return undefined;
  return { code, message };
}
