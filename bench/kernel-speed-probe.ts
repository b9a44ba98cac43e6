/**
 * How fast this machine runs the kernel at a given moment: one thread (the bench's own) scales one
 * batch of G1 points with the contribution kernel and reads its own CPU time around it.
 *
 * Why a bench needs it: on the two-core virtual machine the benches run on, the same kernel on the
 * same points took 54 to 84 µs of CPU a point on one thread within a few minutes, the machine
 * otherwise idle (the host's load on the physical cores, which the guest cannot see: no steal time,
 * no cycle counters). A turn set against a floor taken at another moment then measures the host as
 * much as the code. Probing before the floor, after it and during the turn says which it was.
 *
 * What it reads is CPU time, not wall time: a probe that shares its core with the page's workers is
 * descheduled, but its CPU time is what the kernel costs on that core at that moment (measured: a
 * spinning process on the same core left it unchanged; one streaming 64 MiB through memory raised
 * it 5 %). The thread's clock is its schedstat (nanoseconds on the CPU), read before and after.
 */
import { readFileSync } from 'node:fs';
import { G1ScaleKernel } from '../core/kernel/g1-scale-kernel.ts';
import { planScaleChain } from '../core/kernel/g1-scale-chain.ts';
import { g1BenchPoints } from './g1-bench-points.ts';

/**
 * Half a lockstep batch: about 28 ms of one core at this machine's best. The probe runs on the
 * bench's own thread, which also drives the page and shapes its link: a short reading stalls them
 * less. It is a gauge of the machine, compared only with its own readings, so its batch need not
 * be the turns' (whose inversions are shared by twice as many points).
 */
const PROBE_POINTS = 512;
/** A fixed full-width scalar: every probe walks the same chain. */
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
  readonly readings: ProbeReading[] = [];
  private timer: NodeJS.Timeout | undefined;

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
    const chain = planScaleChain(PROBE_SCALAR)!;
    const started = threadCpuNs();
    this.kernel.scale(copy, chain);
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
