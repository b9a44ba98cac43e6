/**
 * One teardown for whatever a start-up made, on the model of fastify's onClose hooks: each resource
 * registers its closer as soon as it exists, and `close()` runs the closers in reverse order of
 * registration, so what was made last (the HTTP server) stops first and what everything uses (the
 * database) stops last. The same stack runs on a failed start and on a normal close, so the two
 * can never drift apart, and a new resource is one `add` where it is made.
 *
 * Invariants: `close()` runs each closer once, however often it is called (every call gets the
 * same promise); a closer that fails does not keep the ones after it from running, and the failure
 * is reported once all have run; nothing may be added once closing has begun.
 */

export type Closer = () => unknown;

export class CloserStack {
  private readonly closers: Array<{ name: string; close: Closer }> = [];
  private closing: Promise<void> | undefined;

  /** Registers what stops the resource `name` (for error messages), just made. */
  add(name: string, close: Closer): void {
    if (this.closing) throw new Error(`cannot register a closer for ${name}: already closing`);
    this.closers.push({ name, close });
  }

  /** Runs every closer, last registered first; rejects after all have run if any failed. */
  close(): Promise<void> {
    this.closing ??= this.runAll();
    return this.closing;
  }

  private async runAll(): Promise<void> {
    const failures: Error[] = [];
    for (const { name, close } of [...this.closers].reverse()) {
      try {
        await close();
      } catch (error) {
        failures.push(new Error(`closing ${name}: ${(error as Error)?.message ?? String(error)}`, { cause: error }));
      }
    }
    if (failures.length === 1) throw failures[0];
    if (failures.length > 1) throw new AggregateError(failures, failures.map((f) => f.message).join('; '));
  }
}
