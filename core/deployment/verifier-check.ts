/**
 * The result shape shared by both deployment checks (`verifyDeployment`, `checkManifest`): one
 * line per verifier, plus at most one cause that failed them all (reported once, not per line).
 */
import type { ChainHead } from './deployed-code-reader.ts';

export interface VerifierCheck {
  verifier: string;
  match: boolean;
  /** Why this verifier did not match; empty on a match and when `CheckReport.failure` explains it. */
  reasons: string[];
  /** Reported whatever the result, e.g. a delta equal to gamma (a key without Phase 2). */
  warnings: string[];
  /**
   * What a match proved, one statement each (`verify-deployment --ceremony`), so no verdict reads as
   * more than was checked; absent from the δ-only check, whose one statement is printed once.
   */
  checked?: string[];
  /** The verdict word of a weaker check asked for explicitly (`constants-present`), printed instead of `match`. */
  weaker?: string;
  /** With `weaker`: what the verdict did not prove. */
  notProved?: string;
}

export interface CheckReport {
  /** A cause that failed every verifier that needed it, e.g. an RPC endpoint that cannot be reached. */
  failure?: string;
  /** The state the deployed code was read at, as the endpoint reported it (none when nothing was read). */
  chain?: ChainHead;
  /** `--compare`: the state the second network's code was read at. */
  secondChain?: ChainHead;
  /** About the whole report rather than one verifier, e.g. a test-network ceremony; said first. */
  warnings?: string[];
  /** In manifest order. */
  verifiers: VerifierCheck[];
}

/** True only when there is at least one verifier and every one matched (or passed the weaker check asked for). */
export function allVerifiersMatch(report: CheckReport): boolean {
  return report.verifiers.length > 0 && report.verifiers.every((check) => check.match);
}
