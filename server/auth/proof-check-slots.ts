/**
 * Semaphore proof verifications running at once, all clients together. Each costs the HTTP process
 * tens of ms of CPU (docs/security.md), and the per-address rate limits do not bound many addresses sending proofs
 * together: beyond `max` checks under way, a sign-in is refused `503 auth.proof_checks_busy` with
 * Retry-After. The sign-in takes its slot before it spends its challenge, so a refused contributor
 * sends the same proof again.
 *
 * In this process only: what it bounds is this process's CPU.
 */
import { CoordinatorError } from '../../core/errors.ts';

/** How long a refused client should wait: a check takes tens of ms, so a second frees every slot many times over. */
const RETRY_AFTER_SECONDS = 1;

export class ProofCheckSlots {
  private running = 0;

  constructor(private readonly max: number) {}

  /**
   * Takes a slot (synchronously: two requests cannot both take the last one), or throws the refusal.
   * Returns the slot's release (once only).
   */
  take(): () => void {
    if (this.running >= this.max)
      throw new CoordinatorError(
        'auth.proof_checks_busy',
        `the coordinator is verifying ${this.running} sign-in proofs, the most it checks at once; send the same ` +
          'proof again in a moment (its challenge is not spent)',
        { retryAfterSeconds: RETRY_AFTER_SECONDS },
      );
    this.running++;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.running--;
    };
  }
}
