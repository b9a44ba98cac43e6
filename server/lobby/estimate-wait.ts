/**
 * The ETA shown to a waiting contributor. Deliberately simple, so it can be explained in one line:
 *
 *   etaMs = remaining(current) + (position − 1) × average, at least the cooldown still to run
 *
 * - average: mean duration (grant → accepted) of the circuit's last TURN_SAMPLES accepted turns,
 *   or the configured default before any was measured. Missed and refused turns are not samples.
 * - remaining(current): the circuit's turn or verifying submission in progress is expected to
 *   last `average` from its start; what is left of that (never negative). 0 if the circuit is free.
 * - Contributors ahead who are cooling down after a missed turn are still counted, so the ETA may
 *   overestimate slightly; positions stay stable FIFO.
 */

/** How many recent accepted turns the average is taken over. */
export const TURN_SAMPLES = 10;

export interface WaitEstimateInput {
  position: number;
  averageTurnMs: number;
  /** Start of the circuit's turn or verifying submission in progress, if any. */
  currentStartedAt?: number;
  eligibleAt: number;
  now: number;
}

export function estimateWait({
  position,
  averageTurnMs,
  currentStartedAt,
  eligibleAt,
  now,
}: WaitEstimateInput): number {
  const remainingCurrent = currentStartedAt === undefined ? 0 : Math.max(0, currentStartedAt + averageTurnMs - now);
  const queued = remainingCurrent + (position - 1) * averageTurnMs;
  return Math.round(Math.max(queued, eligibleAt - now, 0));
}
