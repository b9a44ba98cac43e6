/**
 * Work that must not overlap, run one after another in the order it came: each starts once the one
 * before it settled, whether it succeeded or failed, and a failure reaches only its own caller.
 */
export class OneAtATime {
  private tail: Promise<void> = Promise.resolve();

  run<T>(work: () => Promise<T>): Promise<T> {
    const run = this.tail.then(work, work);
    this.tail = run.then(
      () => undefined,
      () => undefined,
    );
    return run;
  }
}
