/**
 * What the coordinator needs of a verifier, whichever it runs (embedded-dispatcher.ts without
 * Redis, bullmq-dispatcher.ts with it): queue a request, hear its outcome. The shapes that cross
 * to the verifier processes live in core/verifier-contract/verifier-contract.ts, which the worker
 * imports too; this module is the coordinator's side only.
 */
import type {
  HeadPreparationRequest,
  HeadPreparationResult,
  VerificationOutcome,
  VerificationRequest,
} from '../../core/verifier-contract/verifier-contract.ts';

/** How a head preparation ended, where the dispatcher hears of it (the embedded verifier's). */
export type HeadPreparationReport = HeadPreparationResult | { circuit: string; failed: string };

export interface VerificationDispatcher {
  /** Queues a verification; idempotent per contributionId. */
  enqueue(request: VerificationRequest): Promise<void>;
  /**
   * Asks a verifier to cache a head's combination (best effort: never awaited by a verification,
   * and a failure is only reported).
   */
  prepareHead(request: HeadPreparationRequest): void;
  /** Called once per finished request (valid, invalid or error). */
  onOutcome(listener: (outcome: VerificationOutcome) => void): void;
  close(): Promise<void>;
}

/**
 * Hands an outcome to every listener. A listener that throws or rejects is reported on stderr and
 * does not keep the others from hearing it: one failing consumer must not lose a verdict.
 */
export function notifyOutcome(
  listeners: ReadonlyArray<(outcome: VerificationOutcome) => void>,
  outcome: VerificationOutcome,
): void {
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
  process.stderr.write(
    `verification outcome listener failed: ` +
      `${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
  );
}
