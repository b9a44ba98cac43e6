/**
 * One Node kernel thread: instantiates the G1 kernel once, then scales the slices it is sent and
 * sends them back (transferred, not copied). Its memory holds secret-derived values only while a
 * contribution runs; the pool terminates the thread at the end.
 */
import { parentPort } from 'node:worker_threads';
import { G1ScaleKernel } from './g1-scale-kernel.ts';
import type { ScaleRequest, ScaleReply } from './scale-messages.ts';

const port = parentPort;
if (!port) throw new Error('scale-thread-body runs only as a worker thread');
const kernel = await G1ScaleKernel.instantiate();
port.on('message', (request: ScaleRequest) => {
  let reply: ScaleReply;
  try {
    kernel.scale(request.points, { schedule: request.schedule, steps: request.steps });
    reply = { id: request.id, points: request.points };
  } catch (error) {
    reply = { id: request.id, error: (error as Error).message };
  }
  port.postMessage(reply, 'points' in reply ? [reply.points.buffer as ArrayBuffer] : []);
});
port.postMessage({ id: -1, ready: true, kind: kernel.kind } satisfies ScaleReply);
