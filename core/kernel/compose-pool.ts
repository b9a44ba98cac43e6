/**
 * init's compose pool: one Node thread per core, each owning, for every job it is given, the
 * accumulators of its share of a key section's signals (compose-kernel.ts: blocks of consecutive
 * signals, dealt by the caller). A job's chunks of constraints go to every thread (each adds the
 * terms of its own signals); each thread writes its outputs in place. Several jobs (circuits
 * initialised at once, or a section composed while the one before is written) share the threads.
 * `close()` stops them; a thread that dies fails every call waiting on it and the pool with it.
 */
import { availableParallelism } from 'node:os';
import { Worker } from 'node:worker_threads';
import type { MsmGroup } from './msm-kernel.ts';
import type { ComposeReply, ComposeRequest, MatrixBases } from './compose-messages.ts';
import { threadExecArgv } from '../runtime/thread-exec-argv.ts';
import { kernelThreadEntry } from '../runtime/kernel-thread-entry.ts';

type Outcome = { done: true } | { points: Uint8Array } | { badSignal: number };
type RequestBody = ComposeRequest extends infer R ? (R extends ComposeRequest ? Omit<R, 'id'> : never) : never;

interface Pending {
  resolve(outcome: Outcome): void;
  reject(error: Error): void;
}

/** A term of a chunk names a signal the r1cs does not have (its constraint, counted in the chunk). */
export class ComposeSignalError extends Error {
  constructor(readonly constraint: number) {
    super(`constraint ${constraint} of the chunk names a signal out of range`);
  }
}

export class ComposePool {
  private nextId = 0;
  private nextJob = 0;
  private readonly pending: Array<Map<number, Pending>>;
  private failure: Error | undefined;

  private constructor(private readonly workers: Worker[]) {
    this.pending = workers.map(() => new Map());
  }

  get threads(): number {
    return this.workers.length;
  }

  static async start(threads = availableParallelism()): Promise<ComposePool> {
    const entry = kernelThreadEntry(import.meta.url, 'compose');
    const pool = new ComposePool(
      Array.from(
        { length: Math.max(1, threads) },
        () => new Worker(entry, { execArgv: threadExecArgv(import.meta.url) }),
      ),
    );
    try {
      await Promise.all(
        pool.workers.map(
          (worker, index) =>
            new Promise<void>((ready, failed) => {
              worker.on('message', (reply: ComposeReply) => {
                if ('ready' in reply) return ready();
                const waiting = pool.pending[index]!.get(reply.id);
                if (!waiting) return;
                pool.pending[index]!.delete(reply.id);
                if ('error' in reply) waiting.reject(new Error(`compose thread: ${reply.error}`));
                else waiting.resolve(reply);
              });
              const fail = (error: Error): void => {
                pool.failure ??= error;
                failed(error);
                for (const waiting of pool.pending[index]!.values()) waiting.reject(error);
                pool.pending[index]!.clear();
              };
              worker.on('error', fail);
              worker.on('exit', (code) => fail(new Error(`compose thread exited with code ${code}`)));
            }),
        ),
      );
    } catch (error) {
      await pool.close();
      throw error;
    }
    return pool;
  }

  private call(thread: number, body: RequestBody, transfer: ArrayBuffer[] = []): Promise<Outcome> {
    return new Promise<Outcome>((resolve, reject) => {
      if (this.failure) return reject(this.failure);
      const id = this.nextId++;
      this.pending[thread]!.set(id, { resolve, reject });
      this.workers[thread]!.postMessage({ ...body, id } as ComposeRequest, transfer);
    });
  }

  /**
   * Opens a job over the signals [0, nWires) of one section in `group`, dealt between the threads
   * by blocks of 2^shift consecutive signals: block b goes to thread owners[b].
   */
  async open(group: MsmGroup, nWires: number, shift: number, owners: Uint8Array): Promise<ComposeJob> {
    if (owners.length !== Math.ceil(nWires / 2 ** shift) || owners.some((t) => t >= this.threads))
      throw new RangeError('one thread of the pool per block of signals');
    const job = this.nextJob++;
    const shares = this.workers.map(() => [] as number[]);
    owners.forEach((t, block) => shares[t]!.push(block));
    await Promise.all(
      this.workers.map((_, t) =>
        this.call(t, { kind: 'open', job, group, share: { shift, blocks: Uint32Array.from(shares[t]!) }, nWires }),
      ),
    );
    return new ComposeJob(this, job, this.threads);
  }

  /**
   * s·G for each scalar (32-byte Fr elements in Montgomery form, as ffjavascript keeps them) with G
   * the group's generator, affine points in the zkey layout, the scalars split between the threads.
   */
  async generatorTimes(group: MsmGroup, scalars: Uint8Array): Promise<Uint8Array> {
    const n = scalars.byteLength / 32;
    const pointBytes = group === 'G1' ? 64 : 128;
    const parts = await Promise.all(
      this.workers.map((_, t) => {
        const first = Math.floor((n * t) / this.threads);
        const end = Math.floor((n * (t + 1)) / this.threads);
        return this.call(t, { kind: 'generator-times', group, scalars: scalars.slice(first * 32, end * 32) });
      }),
    );
    const out = new Uint8Array(n * pointBytes);
    let at = 0;
    for (const part of parts) {
      const points = (part as { points: Uint8Array }).points;
      out.set(points, at);
      at += points.byteLength;
    }
    return out;
  }

  /** @internal: ComposeJob's messages. */
  send(thread: number, body: RequestBody, transfer?: ArrayBuffer[]): Promise<Outcome> {
    return this.call(thread, body, transfer);
  }

  async close(): Promise<void> {
    this.failure ??= new Error('the compose pool was closed');
    await Promise.all(this.workers.map((worker) => worker.terminate()));
  }
}

/** One section's job on the pool: chunks in, then its outputs in signal order. */
export class ComposeJob {
  constructor(
    private readonly pool: ComposePool,
    private readonly job: number,
    private readonly threads: number,
  ) {}

  /**
   * Adds the terms of `count` whole constraints (r1cs bytes) with their bases per matrix, on every
   * thread; resolves when all have, and rejects with ComposeSignalError for a signal out of range.
   */
  async add(constraints: Uint8Array, count: number, bases: MatrixBases): Promise<void> {
    const outcomes = await Promise.all(
      Array.from({ length: this.threads }, (_, t) =>
        this.pool.send(t, { kind: 'add', job: this.job, constraints, count, bases }),
      ),
    );
    const bad = outcomes.find((outcome) => 'badSignal' in outcome);
    if (bad) throw new ComposeSignalError((bad as { badSignal: number }).badSignal);
  }

  /**
   * The affine outputs of signals [from, to), in order, written into `into` (a view of a
   * SharedArrayBuffer, pointBytes a signal: every thread writes its own signals in place) and
   * returned.
   */
  async points(from: number, to: number, into: Uint8Array): Promise<Uint8Array> {
    await Promise.all(
      Array.from({ length: this.threads }, (_, t) =>
        this.pool.send(t, { kind: 'affine', job: this.job, from, to, into }),
      ),
    );
    return into;
  }

  async close(): Promise<void> {
    await Promise.all(
      Array.from({ length: this.threads }, (_, t) => this.pool.send(t, { kind: 'close', job: this.job })),
    );
  }
}
