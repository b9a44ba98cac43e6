/**
 * "Take this turn": everything a terminal contributor does while holding the turn on a circuit,
 * from the head to the last byte of its contribution on the coordinator, behind one interface, so
 * the protocol that moves the bytes (file-turn.ts: the streamed delta, or the whole key through
 * files) is a local change. What happens around a turn (the queue,
 * heartbeats, the verdict) is the run's (contributor-run.ts), not the protocol's.
 */
import type { ProgressEvent } from '../../core/ceremony/progress.ts';

export interface TurnRequest {
  circuit: string;
  /** The head the contribution is made on (GET /api/ceremony's headIndex). */
  headIndex: number;
  /** Its BLAKE2b-512 file hash as the transcript records it: the bytes received are checked against it. */
  headFileHash: string | null;
  /** Recorded in the new key's contribution record (the principal's display name, as the page does). */
  name: string;
  /** Fresh entropy for this contribution only (core/crypto/contribution-entropy.ts). */
  entropy: () => string;
  /** Given up (Ctrl-C, the turn lost): stop moving bytes as soon as possible. */
  signal: AbortSignal;
  /** Steps and counts (bytes down, points scaled, bytes up) for the progress line. */
  progress: (event: ProgressEvent) => void;
  /**
   * The contribution hash, told as soon as it is computed, before the upload: an attempt that then
   * fails may still have reached the coordinator (its answer lost), and its verdict is compared
   * with this hash, not an earlier attempt's.
   */
  onHash?: (contributionHash: string) => void;
  /** A standby turn (client/contributor-driver-parts.ts DriverTurn): said as a free turn being taken. */
  standby?: boolean;
  /**
   * Called once the first download is answered, awaited before computing: on standby, whether that
   * download took the turn (rejects, the turn given up, if another entry took it first).
   */
  taken?: () => Promise<void>;
}

export interface TurnResult {
  /** The contribution hash computed here, as snarkjs prints it: the accepted one must be the same. */
  contributionHash: string;
  /** The coordinator's id of the uploaded contribution (X-Contribution-Id), to find its verdict. */
  contributionId: string | undefined;
  /** Bytes received and sent for this turn. */
  bytesDown: number;
  bytesUp: number;
  /** The upload resumed from this offset after a dropped connection (0 when it never dropped). */
  resumedFrom: number;
  /**
   * Wall-clock milliseconds of each stage (the bench's breakdown); a streamed turn times each from
   * the turn's start, as they overlap.
   */
  timings: { downloadMs: number; computeMs: number; uploadMs: number };
}

export interface TurnProtocol {
  /** Runs the turn; rejects with the coordinator's refusal (ApiError) or the abort. */
  takeTurn(request: TurnRequest): Promise<TurnResult>;
  /** Makes what the first turn needs ready ahead of it (the curve, the code), while the contributor waits. */
  prepare?(): Promise<void>;
}
