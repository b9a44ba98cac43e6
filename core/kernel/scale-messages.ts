/** Messages between a kernel pool and its threads or Web Workers. */
import type { ScaleKernelKind } from './g1-scale-kernel.ts';

export interface ScaleRequest {
  id: number;
  points: Uint8Array;
  schedule: Int8Array;
  steps: number;
}

/** id -1: the worker's start-up (ready, with the walk its kernel runs, or the error that stopped it). */
export type ScaleReply =
  { id: number; points: Uint8Array } | { id: number; error: string } | { id: -1; ready: true; kind: ScaleKernelKind };
