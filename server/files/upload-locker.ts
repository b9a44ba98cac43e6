/**
 * The uploads' tus locker: one lock per upload id in this process, with the semantics of tus's
 * MemoryLocker (a request that wants a held lock asks its holder to release it, then waits for it,
 * failing with ERR_LOCK_TIMEOUT after the timeout or when its own request is stopped), except how it
 * waits. MemoryLocker retries on every turn of the event loop (setImmediate) until the lock is free,
 * and a holder asked to release a PATCH lets it drain for tus's lockDrainTimeout (3 s) first: a core
 * kept busy for seconds each time an upload is replaced or swept while written to. Here a waiter sleeps
 * until the holder unlocks.
 */
import { ERRORS, type Lock, type Locker, type RequestRelease } from '@tus/server';

interface Held {
  requestRelease: RequestRelease;
  /** Resolves when the holder unlocks. */
  released: Promise<void>;
  release(): void;
}

export class UploadLocker implements Locker {
  readonly locks = new Map<string, Held>();

  /** `timeoutMs`: how long a request waits for a lock (MemoryLocker's default, 30 s). */
  constructor(readonly timeoutMs = 30_000) {}

  newLock(id: string): Lock {
    return new UploadLock(id, this);
  }
}

class UploadLock implements Lock {
  constructor(
    private readonly id: string,
    private readonly locker: UploadLocker,
  ) {}

  async lock(stopSignal: AbortSignal, requestRelease: RequestRelease): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    let onStop: (() => void) | undefined;
    const given = new Promise<never>((_, reject) => {
      onStop = () => reject(ERRORS.ERR_LOCK_TIMEOUT);
      timer = setTimeout(onStop, this.locker.timeoutMs);
      stopSignal.addEventListener('abort', onStop, { once: true });
    });
    given.catch(() => {}); // raced below; rejected while nobody waits on it, it must not count as unhandled
    try {
      for (;;) {
        if (stopSignal.aborted) throw ERRORS.ERR_LOCK_TIMEOUT;
        const held = this.locker.locks.get(this.id);
        if (!held) {
          let release!: () => void;
          const released = new Promise<void>((resolve) => (release = resolve));
          this.locker.locks.set(this.id, { requestRelease, released, release });
          return;
        }
        await held.requestRelease();
        await Promise.race([held.released, given]);
      }
    } finally {
      clearTimeout(timer);
      stopSignal.removeEventListener('abort', onStop!);
    }
  }

  async unlock(): Promise<void> {
    const held = this.locker.locks.get(this.id);
    if (!held) throw new Error('Releasing an unlocked lock!');
    this.locker.locks.delete(this.id);
    held.release();
  }
}
