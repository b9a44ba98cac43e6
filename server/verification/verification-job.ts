/**
 * What the coordinator asks of a verifier, and what it gets back. Shared by the embedded
 * verifier process and the BullMQ worker processes, which only ever see these shapes:
 * server and worker never import each other.
 */
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
}

export type VerificationOutcome =
  | { contributionId: string; status: 'valid'; contributionHash: string; recordedName?: string }
  | { contributionId: string; status: 'invalid'; code: string; message: string }
  /** The verifier could not decide (I/O, crash) after its retries; the contribution may be retried. */
  | { contributionId: string; status: 'error'; message: string };

export interface VerificationDispatcher {
  /** Queues a verification; idempotent per contributionId. */
  enqueue(request: VerificationRequest): Promise<void>;
  /** Called once per finished request (valid, invalid or error). */
  onOutcome(listener: (outcome: VerificationOutcome) => void): void;
  close(): Promise<void>;
}
