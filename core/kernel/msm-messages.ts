/** Messages between the MSM pool and its threads. */
import type { MsmGroup } from './msm-kernel.ts';

export interface MsmRequest {
  id: number;
  group: MsmGroup;
  bases: Uint8Array;
  scalars: Uint8Array;
  scalarBytes: number;
  /** G1 only: check the points first (on the curve, canonical); a bad one is reported instead of summed. */
  checkPoints?: boolean;
  /** G2 only: answer the window sums of windows of this many bits (MsmKernel.g2WindowSumParts) instead of the sum. */
  windowBits?: number;
}

/** id -1: the thread's start-up (ready, or the error that stopped it). */
export type MsmReply =
  | { id: number; sums: Uint8Array }
  | { id: number; invalidPoint: number }
  | { id: number; error: string }
  | { id: -1; ready: true };
