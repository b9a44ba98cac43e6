/**
 * What the coordinator asks of a verifier, and what it gets back. Shared by the embedded
 * verifier process and the BullMQ worker processes, which only ever see these shapes:
 * server and worker never import each other. Also the outcome fan-out both dispatchers use, the
 * default queue name and the refusal test both sides of the BullMQ queue must agree on. Its only
 * import is core/errors.ts (no packages), so either side can import it.
 */
import { isErrorCode, refusesContribution, type ErrorCode } from '../../core/errors.ts';

/** Queue the coordinator and `ceremony worker` use unless told otherwise (VERIFICATION_QUEUE). */
export const DEFAULT_VERIFICATION_QUEUE = 'ceremony-verification';

/**
 * True for the error codes that refuse a contribution (core/errors.ts: refusesContribution), as
 * opposed to a problem of the verifier: a refusal is an answer and is never retried. Takes any
 * string, as read back from a queue: an unknown code is no refusal.
 */
export function isRefusalCode(code: string): code is ErrorCode {
  return isErrorCode(code) && refusesContribution(code);
}

export interface VerificationRequest {
  /** The contribution row this verifies (also the BullMQ job id, so a job is never queued twice). */
  contributionId: string;
  circuit: string;
  /** Index of the head the candidate must extend. */
  headIndex: number;
  initZkeyPath: string;
  headZkeyPath: string;
  ptauPath: string;
  candidatePath: string;
  /**
   * Lets the verifier use the coordinator's secret challenge and its cache of combinations (one
   * MSM per link instead of two; see core/verify/link-challenge.ts). The coordinator always sends
   * it; without it the verifier draws fresh scalars. Hashes are the transcript's file hashes.
   */
  challenge?: { stateDir: string; headFileHash: string; candidateFileHash: string };
}

export type VerificationOutcome =
  | { contributionId: string; status: 'valid'; contributionHash: string; recordedName?: string }
  | { contributionId: string; status: 'invalid'; code: ErrorCode; message: string }
  /** The verifier could not decide (I/O, crash) after its retries; the contribution may be retried. */
  | { contributionId: string; status: 'error'; message: string };

export interface VerificationDispatcher {
  /** Queues a verification; idempotent per contributionId. */
  enqueue(request: VerificationRequest): Promise<void>;
  /** Called once per finished request (valid, invalid or error). */
  onOutcome(listener: (outcome: VerificationOutcome) => void): void;
  close(): Promise<void>;
}

/**
 * Hands an outcome to every listener. A listener that throws or rejects is reported on stderr and
 * does not keep the others from hearing it: one failing consumer must not lose a verdict.
 */
export function notifyOutcome(listeners: ReadonlyArray<(outcome: VerificationOutcome) => void>, outcome: VerificationOutcome): void {
  for (const listener of listeners) {
    try {
      const result: unknown = listener(outcome);
      if (result instanceof Promise) result.catch(reportListenerError);
    } catch (error) {
      reportListenerError(error);
    }
  }
}

function reportListenerError(error: unknown): void {
  process.stderr.write(`verification outcome listener failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
}
