/**
 * How fast this machine runs the kernel at a given moment: one thread (the bench's own) scales one
 * batch of G1 points with the contribution kernel and reads its own CPU time around it (its
 * schedstat, nanoseconds on the CPU). CPU time rather than wall time, so that sharing a core with
 * the page's workers does not move it. Why the benches need it, and what it was checked against:
 * docs/benchmarks.md (a whole ceremony, the machine's own speed).
 */
import { readFileSync } from 'node:fs';
import { G1ScaleKernel } from '../core/kernel/g1-scale-kernel.ts';
import { planScaleChain } from '../core/kernel/g1-scale-chain.ts';
import { g1BenchPoints } from './g1-bench-points.ts';

/**
 * A quarter of the SIMD walk's lockstep batch: some 15 ms of one core on this machine idle. The
 * probe runs on the bench's own thread, which also drives the page and shapes its link: a short
 * reading stalls them less. It is a gauge of the machine, compared only with its own readings, so
 * its batch need not be the turns' (whose inversions are shared by four times as many points).
 */
const PROBE_POINTS = 512;
/** A fixed full-width scalar. */
const PROBE_SCALAR = 0x1234567890abcdef1234567890abcdef1234567890abcdef1234567890abcdefn;

export interface ProbeReading {
  /** When it was taken (ms since the epoch). */
  t: number;
  /** CPU µs a point of this thread. */
  usPerPoint: number;
}

/** This thread's time on the CPU, in nanoseconds (Linux schedstat: its first field). */
function threadCpuNs(): number {
  return Number(readFileSync('/proc/thread-self/schedstat', 'utf8').split(' ', 1)[0]);
}

export class KernelSpeedProbe {
  private readonly readings: ProbeReading[] = [];
  private timer: NodeJS.Timeout | undefined;

  /** The same chain every reading: the probe's fixed scalar. */
  private readonly chain = planScaleChain(PROBE_SCALAR)!;

  private constructor(
    private readonly kernel: G1ScaleKernel,
    private readonly points: Uint8Array,
  ) {}

  static async create(): Promise<KernelSpeedProbe> {
    const probe = new KernelSpeedProbe(await G1ScaleKernel.instantiate(), await g1BenchPoints(PROBE_POINTS));
    // The first runs compile the module's hot functions in the optimising tier: not a reading.
    for (let i = 0; i < 3; i++) probe.measure();
    return probe;
  }

  /** Scales the probe's points once; CPU µs a point. */
  private measure(): number {
    const copy = this.points.slice();
    const started = threadCpuNs();
    this.kernel.scale(copy, this.chain);
    return (threadCpuNs() - started) / 1000 / PROBE_POINTS;
  }

  /** Takes a reading now and keeps it. */
  probe(): ProbeReading {
    const reading = { t: Date.now(), usPerPoint: this.measure() };
    this.readings.push(reading);
    return reading;
  }

  /** Takes `count` readings back to back (beside a measurement, to know the machine's speed at it). */
  burst(count: number): void {
    for (let i = 0; i < count; i++) this.probe();
  }

  /** Probes every `everyMs` until `stop()`; a reading every 5 s costs about 0.6 % of one core. */
  every(everyMs: number): void {
    this.stop();
    this.timer = setInterval(() => this.probe(), everyMs).unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
  }

  /** The readings taken from `from` to `to` (ms since the epoch). */
  between(from: number, to: number): number[] {
    return this.readings.filter((r) => r.t >= from && r.t <= to).map((r) => r.usPerPoint);
  }
}
