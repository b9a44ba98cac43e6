/** Messages between a kernel pool and its threads or Web Workers. */
export interface ScaleRequest {
  id: number;
  points: Uint8Array;
  schedule: Int8Array;
  steps: number;
}

export type ScaleReply = { id: number; points: Uint8Array } | { id: number; error: string } | { id: -1; ready: true };
