/**
 * One Node thread of init's compose pool: keeps the jobs it is sent (one ComposeKernel each: the
 * accumulators of its share of one key section's signals), adds the chunks of constraints it
 * receives into them and hands back the affine points; and multiplies the generators by the
 * development ptau's scalars (FixedBaseKernel, one table per group).
 */
import { parentPort } from 'node:worker_threads';
import { ComposeKernel, FixedBaseKernel } from './compose-kernel.ts';
import { G1_GENERATOR, G2_GENERATOR } from './generators.ts';
import type { ComposeReply, ComposeRequest } from './compose-messages.ts';

const port = parentPort;
if (!port) throw new Error('compose-thread-body runs only as a worker thread');
const jobs = new Map<number, ComposeKernel>();
/** Instances of finished jobs, for the next ones (one per job that may run at once is plenty). */
const spare: WebAssembly.Instance[] = [];
const SPARE_INSTANCES = 2;
/** The fixed-base tables, one per group, made on first use. */
const fixedBase = new Map<string, Promise<FixedBaseKernel>>();

async function handle(request: ComposeRequest): Promise<ComposeReply> {
  switch (request.kind) {
    case 'open':
      jobs.set(request.job, await ComposeKernel.open(request.group, request.share, request.nWires, spare.pop()));
      return { id: request.id, done: true };
    case 'add': {
      const result = job(request.job).add(request.constraints, request.count, request.bases);
      return 'badSignal' in result ? { id: request.id, badSignal: result.badSignal } : { id: request.id, done: true };
    }
    case 'affine':
      job(request.job).affine(request.from, request.to, request.into);
      return { id: request.id, done: true };
    case 'generator-times': {
      let kernel = fixedBase.get(request.group);
      if (!kernel) {
        kernel = FixedBaseKernel.create(request.group, request.group === 'G1' ? G1_GENERATOR : G2_GENERATOR);
        fixedBase.set(request.group, kernel);
      }
      return { id: request.id, points: (await kernel).times(request.scalars) };
    }
    case 'close': {
      const finished = jobs.get(request.job);
      jobs.delete(request.job);
      if (finished && spare.length < SPARE_INSTANCES) spare.push(finished.instance);
      return { id: request.id, done: true };
    }
  }
}

function job(id: number): ComposeKernel {
  const kernel = jobs.get(id);
  if (!kernel) throw new Error(`no compose job ${id}`);
  return kernel;
}

// Requests are handled one at a time, in order (an 'open' compiles before the job's first 'add').
let queue: Promise<void> = Promise.resolve();
port.on('message', (request: ComposeRequest) => {
  queue = queue.then(async () => {
    let reply: ComposeReply;
    try {
      reply = await handle(request);
    } catch (error) {
      reply = { id: request.id, error: (error as Error).message };
    }
    port.postMessage(reply, 'points' in reply ? [reply.points.buffer as ArrayBuffer] : []);
  });
});
port.postMessage({ id: -1, ready: true } satisfies ComposeReply);
