/**
 * The bookkeeping of things held at once (downloads, held polls), per key and in all: each taken
 * slot comes with a release that gives it back once, however often it is called, so a request that
 * ends by several routes (finish, close, abort) cannot give back more than it took. Refusing is the
 * caller's: each bound answers with its own code.
 */
export class KeyedSlots {
  private readonly byKey = new Map<string, number>();
  private counted = 0;

  /** Slots `key` holds now. */
  heldBy(key: string): number {
    return this.byKey.get(key) ?? 0;
  }

  /** Slots held now that count in the total. */
  get total(): number {
    return this.counted;
  }

  /** Takes a slot for `key` (`inTotal` false: not counted in the total). Returns its release. */
  take(key: string, inTotal = true): () => void {
    this.byKey.set(key, this.heldBy(key) + 1);
    if (inTotal) this.counted++;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const left = this.heldBy(key) - 1;
      if (left > 0) this.byKey.set(key, left);
      else this.byKey.delete(key);
      if (inTotal) this.counted--;
    };
  }
}
