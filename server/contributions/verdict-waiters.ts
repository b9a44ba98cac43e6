/**
 * Requests held until a contribution's verdict is in (`GET /api/me?verdictWaitMs=N`): the terminal
 * client asks once and hears the verdict the moment it is recorded, where fixed polls showed it up
 * to a poll later. Each waiter is bounded in time and dropped when its request closes; the store
 * wakes them when a row leaves `verifying` (a wake-up before the transaction commits only answers
 * early, and the continuation runs after the synchronous transaction anyway).
 */

/** The longest a request is held: a verdict takes about a second at 2^18, and a held request is a socket. */
export const MAX_VERDICT_WAIT_MS = 10_000;

export class VerdictWaiters {
  private readonly waiting = new Map<string, Set<() => void>>();

  /** Resolves when one of `ids` is settled, after `ms`, or when `signal` aborts, whichever comes first. */
  wait(ids: readonly string[], ms: number, signal: AbortSignal): Promise<void> {
    return new Promise((resolve) => {
      const done = (): void => {
        clearTimeout(timer);
        signal.removeEventListener('abort', done);
        for (const id of ids) {
          const set = this.waiting.get(id);
          set?.delete(done);
          if (set?.size === 0) this.waiting.delete(id);
        }
        resolve();
      };
      const timer = setTimeout(done, Math.min(ms, MAX_VERDICT_WAIT_MS));
      if (signal.aborted) return done();
      signal.addEventListener('abort', done, { once: true });
      for (const id of ids) {
        let set = this.waiting.get(id);
        if (!set) this.waiting.set(id, (set = new Set()));
        set.add(done);
      }
    });
  }

  /** Answers every request held for `id`. */
  settled(id: string): void {
    for (const done of [...(this.waiting.get(id) ?? [])]) done();
  }
}
