/** Messages between init's compose pool (compose-pool.ts) and its threads (compose-thread-body.ts). */
import type { MsmGroup } from './msm-kernel.ts';

/** A thread's share of a section's signals: blocks of 2^shift consecutive signals, ascending. */
export interface SignalShare {
  shift: number;
  blocks: Uint32Array;
}

/** One matrix's bases for a chunk of constraints (point k for its k-th constraint), or null to leave it out. */
export type MatrixBases = [Uint8Array | null, Uint8Array | null, Uint8Array | null];

export type ComposeRequest =
  /** Start a job: accumulators for the thread's share of the signals of one key section, all at infinity. */
  | { id: number; kind: 'open'; job: number; group: MsmGroup; share: SignalShare; nWires: number }
  /** Add the terms of `count` whole r1cs constraints (their bytes) whose signal is the job's. */
  | { id: number; kind: 'add'; job: number; constraints: Uint8Array; count: number; bases: MatrixBases }
  /**
   * The job's outputs for the thread's signals of [from, to) as affine points, written at their
   * places in `into` (a view of shared memory, signal s at (s − from)·pointBytes).
   */
  | { id: number; kind: 'affine'; job: number; from: number; to: number; into: Uint8Array }
  /** Drop the job's accumulators. */
  | { id: number; kind: 'close'; job: number }
  /** s·G for each scalar (Fr, Montgomery form, 32 bytes each) and G the group's generator. */
  | { id: number; kind: 'generator-times'; group: MsmGroup; scalars: Uint8Array };

/** id -1: the thread's start-up (ready, or the error that stopped it). */
export type ComposeReply =
  | { id: number; done: true }
  | { id: number; points: Uint8Array }
  /** A term names a signal beyond the r1cs's wires, in the chunk's constraint `constraint`. */
  | { id: number; badSignal: number }
  | { id: number; error: string }
  | { id: -1; ready: true };
