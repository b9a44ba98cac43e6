/**
 * What a terminal contributor's run (contributor-run.ts) is given, and how it ends: its options,
 * the terminal it draws on, the circuits it had accepted (the failure `ceremony` prints is the
 * driver's RunFailure, client/contributor-driver-parts.ts).
 */
import type { CeremonyView } from '../../core/coordinator-api/api-types.ts';
import type { ProgressEvent } from '../../core/ceremony/progress.ts';
import type { CoordinatorClient } from './coordinator-client.ts';
import type { TurnProtocol } from './turn-protocol.ts';

export interface RunUi {
  progress(event: ProgressEvent): void;
  /** A line of its own (verdicts, notices), above any live line. */
  note(line: string): void;
  /** Live lines are redrawn (a terminal), rather than printed one after another (a log). */
  readonly live: boolean;
}

export interface ContributorRunOptions {
  client: CoordinatorClient;
  protocol: TurnProtocol;
  ceremony: CeremonyView;
  /** The circuits to contribute to, in ceremony order. */
  circuits: readonly string[];
  /** The contributor named no circuit: join every circuit, as the page does (no choice sent). */
  everyCircuit: boolean;
  /** Recorded in each key (the principal's display name, as the page records it). */
  name: string;
  /** Fresh entropy for each contribution. */
  entropy: () => string;
  /** Refused attempts of one circuit after which the run stops (and leaves the queue). */
  maxAttempts: number;
  ui: RunUi;
  /** Writes one line to stdout. */
  output: (line: string) => void;
  /** Signs in again with the same method (the session ended while waiting: 12 hours). */
  signInAgain: () => Promise<void>;
  /** Aborted when the contributor leaves (Ctrl-C): the turn in progress stops. */
  signal: AbortSignal;
  /**
   * Settles when the protocol is set up (snarkjs and the curve loaded: TurnProtocol.prepare). A
   * turn is taken only after it: its set-up is seconds of CPU that would otherwise starve the
   * turn's heartbeats on a busy machine, so that a turn just taken would fall silent.
   */
  ready?: Promise<void>;
}

export interface AcceptedCircuit {
  circuit: string;
  index: number;
  contributionHash: string;
}

/** Where the run is, for Ctrl-C: leaving during a turn asks first. */
export type RunActivity = { stage: 'starting' | 'waiting' | 'done' } | { stage: 'turn' | 'verifying'; circuit: string };
