/**
 * A minimum transfer rate for every answer: a client that reads what it asked for slower than
 * `minBytesPerSecond`, measured over `windowMs`, has its connection closed. Without it a reader at
 * 1 byte/s holds a socket and an open file (a key's download) or a socket and a buffered answer
 * (the transcript) for days, and a few hundred such readers hold every descriptor the process has.
 *
 * Only a reader that holds the answer back is cut: the answer must have bytes waiting in the
 * process for the socket (the kernel's buffers full), and fewer than the minimum must have left
 * for the kernel since the last look. An answer the server is still working out (nothing waiting),
 * a presence stream that writes a few bytes a beat, a slow upload (a request, not an answer) are
 * never cut. The cut is a clean close of the connection: the status and headers went out long ago,
 * so the client sees an answer shorter than its Content-Length (a download resumes with a range).
 *
 * One timer for all answers, looking every `windowMs`: a stalled reader is cut between one and two
 * windows after it stalled; registering an answer costs a map entry.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { RequestHandler } from 'express';
import { defaultSettings } from '../config/setting.ts';
import { CONNECTION_SETTINGS } from './connection-settings.ts';

export interface SlowReaderLimits {
  /** The least a reader must take per second, on average over a window; 0: no minimum. */
  minBytesPerSecond: number;
  windowMs: number;
}

/** The MIN_TRANSFER_* settings' defaults (connection-settings.ts, which says why these). */
export const SLOW_READER_DEFAULTS: SlowReaderLimits = Object.freeze({
  minBytesPerSecond: defaultSettings(CONNECTION_SETTINGS.settings).MIN_TRANSFER_BYTES_PER_SECOND,
  windowMs: defaultSettings(CONNECTION_SETTINGS.settings).MIN_TRANSFER_WINDOW_MS,
});

interface Watched {
  /** Bytes the socket had handed to the kernel at the last look. */
  sent: number;
  /** When that look was. */
  at: number;
}

export class SlowReaderGuard {
  private readonly watched = new Map<ServerResponse, Watched>();
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly limits: SlowReaderLimits,
    private readonly onCut: (req: IncomingMessage, fields: { sentBytes: number; windowMs: number }) => void = () => {},
    private readonly now: () => number = () => performance.now(),
  ) {}

  /** Watches every answer from its start to its end (Express middleware, first in the chain). */
  middleware(): RequestHandler {
    return (_req, res, next) => {
      if (this.limits.minBytesPerSecond > 0) this.watch(res);
      next();
    };
  }

  private watch(res: ServerResponse): void {
    this.watched.set(res, { sent: handedToKernel(res), at: this.now() });
    res.once('close', () => this.watched.delete(res));
    this.timer ??= setInterval(() => this.look(), this.limits.windowMs).unref();
  }

  private look(): void {
    const now = this.now();
    for (const [res, last] of this.watched) {
      const socket = res.socket;
      if (!socket || socket.destroyed) {
        this.watched.delete(res);
        continue;
      }
      const sent = handedToKernel(res);
      const elapsedMs = now - last.at;
      // Nothing waits for the reader: whatever the pace, it is not the reader's doing. Measure from here.
      if (socket.writableLength === 0 && res.writableLength === 0) {
        Object.assign(last, { sent, at: now });
        continue;
      }
      if (elapsedMs < this.limits.windowMs * 0.9) continue; // watched for less than a window yet
      if (sent - last.sent < (this.limits.minBytesPerSecond * elapsedMs) / 1000) {
        this.watched.delete(res);
        this.onCut(res.req, { sentBytes: sent, windowMs: Math.round(elapsedMs) });
        socket.destroy();
        continue;
      }
      Object.assign(last, { sent, at: now });
    }
    if (this.watched.size === 0 && this.timer) {
      clearInterval(this.timer);
      this.timer = undefined;
    }
  }
}

/** Bytes of this connection handed to the kernel: written, less what still waits in the process. */
function handedToKernel(res: ServerResponse): number {
  const socket = res.socket;
  if (!socket) return 0;
  return (socket.bytesWritten ?? 0) - socket.writableLength;
}
