/**
 * Where the time of the coordinator's long work goes: each named stage's wall time, summed over
 * its runs, written to stderr when the work ends as lines `stage-time <scope>: <stage> <ms> ms`,
 * in the order the stages first started. Off unless CEREMONY_STAGE_TIMES=1 (read once, at load):
 * then a timer costs a clock reading per stage. The benchmarks set it and parse the lines
 * (bench/coordinator-work.ts); stages that overlap (a write beside a composition) each count their
 * own wall time, so the stages need not add up to the whole.
 */

const ENABLED = process.env.CEREMONY_STAGE_TIMES === '1';

/** The line prefix the benchmarks parse. */
export const STAGE_TIME_PREFIX = 'stage-time';

export class StageTimer {
  private readonly stages = new Map<string, number>();
  private marked: { stage: string; started: number } | undefined;

  constructor(private readonly scope: string) {}

  /** Runs `work`, adding its wall time to `stage`'s. */
  async time<T>(stage: string, work: () => Promise<T>): Promise<T> {
    if (!ENABLED) return work();
    const started = performance.now();
    try {
      return await work();
    } finally {
      this.add(stage, performance.now() - started);
    }
  }

  /** Adds `ms` to `stage`'s time (for stages timed in pieces by their caller). */
  add(stage: string, ms: number): void {
    if (ENABLED) this.stages.set(stage, (this.stages.get(stage) ?? 0) + ms);
  }

  /**
   * Ends the stage last marked (adding its time) and starts `stage`, for work that goes through
   * stages in turn and reports them as it goes (snarkjs's logger); undefined only ends it.
   */
  mark(stage: string | undefined): void {
    if (!ENABLED) return;
    const now = performance.now();
    if (this.marked) this.add(this.marked.stage, now - this.marked.started);
    this.marked = stage === undefined ? undefined : { stage, started: now };
  }

  /** The clock the stages are measured with (0 when timings are off: nothing to measure). */
  now(): number {
    return ENABLED ? performance.now() : 0;
  }

  /** Writes the stages' times to stderr (nothing when timings are off). */
  report(): void {
    if (!ENABLED) return;
    const lines = [...this.stages].map(
      ([stage, ms]) => `${STAGE_TIME_PREFIX} ${this.scope}: ${stage} ${ms.toFixed(0)} ms\n`,
    );
    process.stderr.write(lines.join(''));
  }
}
