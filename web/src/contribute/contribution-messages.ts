/** Messages between the page and the contribution worker. */

export interface WorkerRequest {
  /** The current head of the chain (zkey bytes). */
  head: Uint8Array;
  /** Recorded in the zkey's contribution record (public): the login, or "anonymous". */
  name: string;
  /** Optional text the person typed; mixed into the randomness, never sent. */
  typedEntropy: string;
}

export type WorkerReply =
  | { type: 'progress'; percent: number; step: string }
  | { type: 'done'; zkey: Uint8Array; hash: string }
  | { type: 'failed'; message: string };
