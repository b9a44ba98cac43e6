/**
 * How the default audit holds a key between to its transcript entry (audit-from-initial.ts): by the
 * hash of each of its sections and by its layout, read once, without the whole-file hash. Why a
 * sectioned key in a contribution's layout is fixed by its section hashes: docs/audit.md ("A key
 * between is read once").
 *
 * A key of HASH_THREAD_MIN_BYTES or more is hashed on one of `threads` worker threads started on
 * first use and kept for the chain; a smaller one on the calling thread (a thread's start would cost
 * more). The ranges are read from the file as it is when hashed: a file that changed since its
 * layout was read hashes to other sections, and fails.
 */
import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { open } from 'node:fs/promises';
import { availableParallelism } from 'node:os';
import { Worker } from 'node:worker_threads';
import { readSectionTable, SectionTableError } from '../binfile/section-table.ts';
import { FILE_HASH_ALGORITHM, HASH_THREAD_MIN_BYTES } from '../crypto/file-hash.ts';
import { threadExecArgv } from '../runtime/thread-exec-argv.ts';
import { HASH_WORK_ITEM, tallyWork } from '../runtime/work-tally.ts';
import type { SectionHashes } from '../zkey/zkey-hashes.ts';

/** A key file's layout: what, besides its sections' bodies, its bytes are. */
export interface KeyLayout {
  version: number;
  /** Section ids in file order. */
  order: number[];
  /** Where each section's body lies, in file order. */
  ranges: SectionRange[];
}

interface SectionRange {
  id: number;
  start: number;
  end: number;
}

/**
 * The layout of the zkey at `filePath` (magic checked; a count other than `expectedCount` refused
 * before any section entry is read); throws SectionTableError for bytes that are no sectioned key,
 * or that go on after the last section.
 */
export async function readKeyLayout(filePath: string, expectedCount?: number): Promise<KeyLayout> {
  const handle = await open(filePath, 'r');
  try {
    const { size } = await handle.stat();
    const table = await readSectionTable(handle, size, 'zkey', expectedCount);
    if (table.end !== size) throw new SectionTableError(`${size - table.end} bytes after the last section`);
    const ranges = [...table.sections].map(([id, { offset, size: length }]) => ({
      id,
      start: offset,
      end: offset + length,
    }));
    return { version: table.version, order: ranges.map((r) => r.id), ranges };
  } finally {
    await handle.close();
  }
}

async function hashRange(filePath: string, { start, end }: SectionRange): Promise<string> {
  const hash = createHash(FILE_HASH_ALGORITHM);
  if (end > start)
    for await (const chunk of createReadStream(filePath, { start, end: end - 1, highWaterMark: 1 << 20 }))
      hash.update(chunk as Buffer);
  return hash.digest('hex');
}

/**
 * Plain CommonJS, evaluated: the same in the sources (tsx) and the compiled app. Hashes one key's
 * ranges a message, its answer naming the key's job.
 */
const SECTION_HASH_THREAD = `
const { parentPort } = require('node:worker_threads');
const { createHash } = require('node:crypto');
const { createReadStream } = require('node:fs');
parentPort.on('message', async ({ job, path, ranges, algorithm }) => {
  try {
    const hashes = {};
    for (const { id, start, end } of ranges) {
      const hash = createHash(algorithm);
      if (end > start)
        for await (const chunk of createReadStream(path, { start, end: end - 1, highWaterMark: 1 << 20 }))
          hash.update(chunk);
      hashes[id] = hash.digest('hex');
    }
    parentPort.postMessage({ job, hashes });
  } catch (error) {
    parentPort.postMessage({ job, error: { message: error.message, code: error.code } });
  }
});
`;

interface Job {
  /** The number its thread's answer names: an answer is taken for its own key only. */
  id: number;
  resolve: (hashes: SectionHashes) => void;
  reject: (error: Error) => void;
}

type Reply = { job: number; hashes?: SectionHashes; error?: { message: string; code?: string } };

/** Section hashes of keys, on worker threads for large keys, as many keys at once as there are threads. */
export class SectionHasher {
  private readonly idle: Worker[] = [];
  /** Each started thread, and the job it works on (one at a time). */
  private readonly started = new Map<Worker, Job | undefined>();
  private readonly waiting: Array<() => void> = [];
  private jobs = 0;
  private closed = false;

  constructor(
    private readonly threads = Math.max(1, Math.min(2, availableParallelism())),
    private readonly threadMinBytes = HASH_THREAD_MIN_BYTES,
  ) {}

  /** Each section's hash of the key at `filePath`, laid out as `layout` says (readKeyLayout). */
  async hash(filePath: string, layout: KeyLayout): Promise<SectionHashes> {
    const bytes = layout.ranges.reduce((sum, r) => sum + r.end - r.start, 0);
    tallyWork(HASH_WORK_ITEM, bytes);
    if (bytes < this.threadMinBytes) {
      const hashes: SectionHashes = {};
      for (const range of layout.ranges) hashes[String(range.id)] = await hashRange(filePath, range);
      return hashes;
    }
    const worker = await this.worker();
    const id = ++this.jobs;
    return new Promise<SectionHashes>((resolve, reject) => {
      this.started.set(worker, { id, resolve, reject });
      worker.postMessage({ job: id, path: filePath, ranges: layout.ranges, algorithm: FILE_HASH_ALGORITHM });
    });
  }

  /** Stops the threads; hashes still under way reject. */
  async close(): Promise<void> {
    this.closed = true;
    for (const wake of this.waiting.splice(0)) wake();
    const workers = [...this.started.keys()];
    for (const worker of workers) this.ended(worker, new Error('the section hasher has stopped'));
    await Promise.all(workers.map((worker) => worker.terminate()));
  }

  private async worker(): Promise<Worker> {
    for (;;) {
      if (this.closed) throw new Error('the section hasher has stopped');
      const idle = this.idle.pop();
      if (idle) return idle;
      if (this.started.size < this.threads) return this.start();
      await new Promise<void>((wake) => this.waiting.push(wake));
    }
  }

  private start(): Worker {
    const worker = new Worker(SECTION_HASH_THREAD, { eval: true, execArgv: threadExecArgv(import.meta.url) });
    this.started.set(worker, undefined);
    worker.on('message', (reply: Reply) => {
      const job = this.started.get(worker);
      // An answer that is not its key's (one more for a key answered, from a thread dropped) is
      // taken for nothing: it would hand another key these hashes, or the thread a second key.
      if (job?.id !== reply.job) return;
      this.started.set(worker, undefined);
      // Free for the next key before this one's caller goes on.
      if (!this.closed) {
        this.idle.push(worker);
        this.waiting.shift()?.();
      }
      if (reply.hashes) job.resolve(reply.hashes);
      else
        job.reject(Object.assign(new Error(reply.error?.message), reply.error?.code ? { code: reply.error.code } : {}));
    });
    // A thread that fails or exits is dropped (its job rejected): the next key starts another.
    worker.on('error', (error) => this.ended(worker, error));
    worker.on('exit', () => this.ended(worker, new Error('a section hashing thread stopped')));
    return worker;
  }

  private ended(worker: Worker, error: Error): void {
    if (!this.started.has(worker)) return;
    const job = this.started.get(worker);
    this.started.delete(worker);
    const at = this.idle.indexOf(worker);
    if (at >= 0) this.idle.splice(at, 1);
    job?.reject(error);
    this.waiting.shift()?.();
  }
}
