/** Messages between the MSM pool and its threads. */
import type { MsmGroup } from './g1-msm-kernel.ts';

export interface MsmRequest {
  id: number;
  group: MsmGroup;
  bases: Uint8Array;
  scalars: Uint8Array;
  scalarBytes: number;
}

/** id -1: the thread's start-up (ready, or the error that stopped it). */
export type MsmReply = { id: number; sums: Uint8Array } | { id: number; error: string } | { id: -1; ready: true };
