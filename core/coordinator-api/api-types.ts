/**
 * The coordinator's JSON answers as its clients read them: the browser app (web/, through
 * web/src/api/api-types.ts) and the terminal contributor (cli/contributor/). Types only, so the
 * browser bundle takes nothing from here. Shapes the server keeps too are defined beside this
 * module (principal.ts, lobby-status.ts), in core/ceremony/ceremony-phases.ts and, for a
 * transcript entry, in core/receipts/public-transcript.ts (as the receipt check reads it): one
 * definition checked by every typecheck; the rest mirror the routes in server/routes and server/auth.
 */
import type { ActiveTurn, CircuitProgress, ContributorStatus, QueueEntry, TurnHeartbeat } from './lobby-status.ts';
import type { Principal } from './principal.ts';
import type { CeremonyPhase } from '../ceremony/ceremony-phases.ts';
import type { ErrorCode } from '../errors.ts';
import type { PublicTranscriptEntry } from '../receipts/public-transcript.ts';

export type { CeremonyPhase, CircuitProgress, ContributorStatus, Principal, TurnHeartbeat };

export interface AuthMethods {
  github: boolean;
  semaphore: boolean;
  coordinatorToken: boolean;
  demo: boolean;
}

export interface SessionView {
  principal: Principal | null;
  csrfToken?: string;
}

export interface ContributionView {
  id: string;
  circuit: string;
  status: 'verifying' | 'accepted' | 'refused' | 'discarded' | 'error';
  code: ErrorCode | null;
  message: string | null;
  contributionHash: string | null;
  index: number | null;
  createdAt: number;
  finishedAt: number | null;
}

/** GET /api/me */
export interface MeView {
  principal: Principal;
  /** Server time (ms): deadlines are in the server's clock. */
  now: number;
  phase: CeremonyPhase;
  status: ContributorStatus;
  contributions: ContributionView[];
}

export interface ChainEntryView {
  index: number;
  contributor: string | null;
  contributionHash: string | null;
  fileHash: string;
  time: string;
}

export interface CircuitView {
  name: string;
  verifier: string;
  publicInputs: number;
  constraints: number | null;
  contributions: number;
  queueLength: number;
  headIndex: number;
  headHash: string | null;
  headContributionHash: string | null;
  chain: ChainEntryView[];
  final: { contributionHash: string; fileHash: string; beacon: string } | null;
}

/** GET /api/ceremony */
export interface CeremonyView {
  id: string;
  title?: string;
  testNetwork: boolean;
  phase: CeremonyPhase;
  finalised: boolean;
  receiptPublicKey: string;
  /** Upload formats the coordinator takes: 'zkey' (the whole key), 'zkey-delta-v1' (its skeleton). */
  contributionFormats?: string[];
  circuits: CircuitView[];
}

/** GET /api/transcript */
export interface TranscriptView {
  ceremony: string;
  entries: PublicTranscriptEntry[];
}

/** GET /api/manifest: verifier name → delta point. */
export type ManifestView = Record<string, { deltax1: string; deltax2: string }>;

export interface SignedReceipt {
  body: string;
  signature: string;
}

/** GET /api/admin/overview */
export interface AdminOverview {
  phase: CeremonyPhase;
  /** When a restart last found a finalisation interrupted (the ceremony went back to closed); absent once finalised. */
  finalisationInterruptedAt?: number;
  queues: Record<string, number>;
  activeTurns: ActiveTurn[];
  contributionCounts: Record<ContributionView['status'], number>;
  verifying: Array<{ id: string; circuit: string; contributor: string; since: number }>;
  heads: Array<{ circuit: string; headIndex: number }>;
  /** Contributions each chain needs before the ceremony may be finalised (ceremony.json). */
  minContributions: number;
  /** The transcript's commitment to the beacon, once made: finalise takes that block's hash. */
  beaconAnnouncement?: BeaconAnnouncementView;
  /** Whether the coordinator has BEACON_RPC_URL: the console may announce, and finalise with no beacon. */
  beaconFromChain: boolean;
}

/** A beacon announcement: the hash of block `blockNumber` of chain `chainId`, hashed 2^iterationsExp times. */
export interface BeaconAnnouncementView {
  chainId: number;
  blockNumber: number;
  iterationsExp: number;
  /** When the transcript recorded it (ISO 8601). */
  time: string;
  /** Its transcript entry's number and hash: what to publish before the block is mined. */
  seq: number;
  hash: string;
}

/** POST /api/admin/beacon/announce */
export interface BeaconAnnounceResult {
  announcement: BeaconAnnouncementView;
  /** The chain's latest block when the announcement was checked. */
  latestBlock: number;
}

/** GET /api/admin/queue */
export interface AdminQueue {
  entries: QueueEntry[];
  activeTurns: ActiveTurn[];
}

/** POST /api/admin/finalise */
export interface FinaliseResult {
  manifest: ManifestView;
  circuits: unknown;
}
