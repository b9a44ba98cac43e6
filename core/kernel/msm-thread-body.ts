/**
 * One Node MSM thread: instantiates the kernel once, then sums the slices it is sent, G1 or G2,
 * and replies with their partial sums (affine points of the slice's group; for G2, on request, the
 * sums of each window); asked to, it first checks a G1 slice's points and replies with the first
 * bad one's index instead.
 */
import { parentPort } from 'node:worker_threads';
import { MsmKernel } from './msm-kernel.ts';
import type { MsmReply, MsmRequest } from './msm-messages.ts';

const port = parentPort;
if (!port) throw new Error('msm-thread-body runs only as a worker thread');
try {
  const kernel = await MsmKernel.instantiate();
  port.on('message', (request: MsmRequest) => {
    let reply: MsmReply;
    try {
      const invalidPoint = request.checkPoints ? kernel.firstInvalidPoint(request.bases) : -1;
      const sums = (): Uint8Array =>
        request.windowBits === undefined
          ? kernel.multiExpParts(request.bases, request.scalars, request.scalarBytes, request.group)
          : kernel.g2WindowSumParts(request.bases, request.scalars, request.scalarBytes, request.windowBits);
      reply = invalidPoint >= 0 ? { id: request.id, invalidPoint } : { id: request.id, sums: sums() };
    } catch (error) {
      reply = { id: request.id, error: (error as Error).message };
    }
    port.postMessage(reply, 'sums' in reply ? [reply.sums.buffer as ArrayBuffer] : []);
  });
  port.postMessage({ id: -1, ready: true } satisfies MsmReply);
} catch (error) {
  port.postMessage({ id: -1, error: (error as Error).message } satisfies MsmReply);
}
