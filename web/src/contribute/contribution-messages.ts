/** Messages between the page and the contribution worker. */
import type { ScaleChain } from '../../../core/kernel/g1-scale-chain.ts';

export interface WorkerRequest {
  /**
   * `contribute` (the default): the whole contribution on the whole head. `record`: the head's
   * small sections only, L with one placeholder point and H empty (streamed-turn.ts): snarkjs makes
   * the new header, δ and record, and the worker answers with them and the scaling chain of the
   * secret, which the page's kernel pool then applies to the real L and H as they arrive.
   */
  type?: 'contribute' | 'record';
  /** The current head of the chain (zkey bytes), or its small sections (`record`). */
  head: Uint8Array;
  /** Recorded in the zkey's contribution record (public): the login, or "anonymous". */
  name: string;
  /** Optional text the person typed; mixed into the randomness, never sent. */
  typedEntropy: string;
  /** Workers of the page's kernel pool; 0: snarkjs scales L and H itself (the fallback). */
  kernelWorkers?: number;
  /** How the page makes this contribution, in words for the progress text. */
  engineNote?: string;
}

/** The page's answer to a `scale` request: the points scaled, or why not. */
export type ScaledMessage =
  { type: 'scaled'; id: number; points: Uint8Array } | { type: 'scaled'; id: number; error: string };

export type WorkerReply =
  | { type: 'progress'; percent: number; step: string }
  | { type: 'scale'; id: number; points: Uint8Array; chain: ScaleChain }
  | { type: 'done'; zkey: Uint8Array; hash: string }
  /** `record`: the new small key (its sections 2 and 10 are the contribution's) and the secret's chain. */
  | { type: 'recorded'; zkey: Uint8Array; hash: string; chain: ScaleChain }
  | { type: 'failed'; message: string };
