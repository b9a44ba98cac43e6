/**
 * The page's side of the contributor protocol, whose state machine (join, waiting, turn,
 * verifying, accepted, and back in the queue) is the terminal's too: client/contributor-driver.ts,
 * driven by `GET /api/me` (the source of truth, so a reload resumes exactly where the server says).
 * Kept here: what the page shows (a snapshot of the answers, deadlines and local work), what it
 * stores, and the turn's work.
 *
 * While a circuit is this contributor's turn, the page runs the turn locally (the driver keeps it
 * alive with heartbeats): streamed where the coordinator takes deltas (preparing → streaming →
 * submitted: streamed-turn.ts; nothing is kept, so a reload makes a new contribution), else with
 * whole keys (preparing → downloading → computing → uploading → submitted), the computed key kept
 * in IndexedDB until uploaded so a reload mid-upload resumes the tus upload from the server's offset.
 */
import type { ApiClient } from '../../../client/api-client.ts';
import { ApiError } from '../../../client/api-client.ts';
import type { MeView } from '../api/api-types.ts';
import { eventSourcePresence, growingReopenPause, PresenceHolder } from '../../../client/presence-holder.ts';
import { ContributorDriver } from '../../../client/contributor-driver.ts';
import { coordinatorApi, isJoined, type DriverTurn } from '../../../client/contributor-driver-parts.ts';
import { candidateKey, candidateStore, type StoredCandidate } from './candidate-store.ts';
import { computeContribution } from './compute-contribution.ts';
import { downloadZkey } from './download-zkey.ts';
import { uploadContribution } from './upload-contribution.ts';
import { streamedTurn, StreamingUnavailable, type StreamedTurnProgress } from './streamed-turn.ts';
import { DELTA_FORMAT } from '../../../core/delta/delta-format.ts';

export type TurnActivity =
  | { stage: 'preparing' }
  | { stage: 'downloading'; loaded: number; total: number | null }
  | { stage: 'computing'; percent: number; step: string }
  | { stage: 'uploading'; sent: number; total: number; resumedFrom: number | null }
  /** A streamed turn (streamed-turn.ts): download, compute and upload at once; `startedAt` for rates. */
  | ({ stage: 'streaming'; startedAt: number } & StreamedTurnProgress)
  /** Uploaded; the verdict follows. */
  | { stage: 'submitted' }
  | { stage: 'failed'; code: string; message: string; retryAt: number };

export interface SessionSnapshot {
  me: MeView | null;
  /** serverTime ≈ Date.now() + clockOffsetMs */
  clockOffsetMs: number;
  /** Local work on the circuit whose turn it is (only meaningful while its state is `turn`). */
  activities: ReadonlyMap<string, TurnActivity>;
  /** Turn deadlines from the latest heartbeat (server clock). */
  deadlines: ReadonlyMap<string, number>;
  /** Contribution hashes this browser computed, by circuit (to compare with the accepted ones). */
  localHashes: ReadonlyMap<string, string>;
  /** The coordinator could not be reached at the last poll. */
  connectionError: string | null;
}

export interface SessionOptions {
  api: ApiClient;
  ceremonyId: string;
  /** Reads and clears the text the person typed as extra entropy (used for one circuit only). */
  takeTypedEntropy: () => string;
  onChange: (snapshot: SessionSnapshot) => void;
}

/** A turn that ended without an upload is taken again after this pause, as is a failed heartbeat sent again. */
const RETRY_AFTER_MS = 5_000;
const LOCAL_HASHES_KEY = 'ceremony.localHashes';
/** A saved candidate older than this is dropped at start: its turn is long over (turns last at most an hour). */
const CANDIDATE_MAX_AGE_MS = 24 * 60 * 60 * 1000;

export class ContributorSession {
  private me: MeView | null = null;
  private clockOffsetMs = 0;
  private connectionError: string | null = null;
  private readonly activities = new Map<string, TurnActivity>();
  private readonly deadlines = new Map<string, number>();
  private readonly localHashes = new Map<string, string>();
  /** Circuits whose saved candidate this page has already deleted (once accepted), not to ask IndexedDB every poll. */
  private readonly candidatesForgotten = new Set<string>();
  private readonly driver: ContributorDriver;

  constructor(private readonly options: SessionOptions) {
    this.driver = new ContributorDriver({
      api: coordinatorApi(options.api),
      turn: (turn) => this.takeTurn(turn),
      presence: new PresenceHolder({ connect: eventSourcePresence(), reopenPauseMs: growingReopenPause() }),
      pollDuringTurns: true,
      confirmLostTurns: false,
      turnRetryPauseMs: RETRY_AFTER_MS,
      heartbeatRetryMs: RETRY_AFTER_MS,
      view: {
        answered: (me) => this.accept(me),
        unanswered: (error) => {
          this.connectionError = error instanceof ApiError ? error.code : String(error);
          this.emit();
        },
        turnStarting: (circuit) => this.setActivity(circuit, { stage: 'preparing' }),
        uploaded: (circuit) => this.setActivity(circuit, { stage: 'submitted' }),
        turnFailed: (circuit, error, { retryAt }) =>
          this.setActivity(circuit, { stage: 'failed', code: error.code, message: error.message, retryAt }),
        turnDropped: (circuit) => this.activities.delete(circuit),
        heartbeat: (circuit, { deadline }) => {
          this.deadlines.set(circuit, deadline);
          this.emit();
        },
      },
    });
  }

  snapshot(): SessionSnapshot {
    return {
      me: this.me,
      clockOffsetMs: this.clockOffsetMs,
      activities: this.activities,
      deadlines: this.deadlines,
      localHashes: this.localHashes,
      connectionError: this.connectionError,
    };
  }

  /** True while leaving the page would cost this contributor a turn or work in progress. */
  get hasTurnInProgress(): boolean {
    return this.driver.turnsUnderWay > 0 || (this.me?.status.circuits.some((c) => c.state === 'turn') ?? false);
  }

  get joined(): boolean {
    return isJoined(this.me);
  }

  /** Starts polling; resolves once the first poll is done. */
  start(): Promise<void> {
    // Keys of hundreds of MB must not pile up in the browser: whatever an earlier visit left
    // behind and never finished uploading is dropped after a day.
    void candidateStore.prune(Date.now() - CANDIDATE_MAX_AGE_MS).catch(() => {});
    const polled = this.driver.nextPoll();
    // The page's run ends only with stop(); a turn's failure is shown, never thrown.
    void this.driver.run().catch(() => {});
    return polled;
  }

  stop(): void {
    this.driver.stop();
  }

  join(): Promise<void> {
    return this.driver.join();
  }

  /**
   * Polls now. Asked while a poll is under way, it polls again as soon as that one ends: an upload
   * that completed meanwhile must not wait a whole interval for its verdict.
   */
  poll(): Promise<void> {
    return this.driver.pollNow();
  }

  /** Each answer: the page's view of it, before the driver starts or stops any turn. */
  private accept(me: MeView): void {
    if (!this.me) this.loadLocalHashes(me.principal.id);
    this.me = me;
    this.connectionError = null;
    this.clockOffsetMs = me.now - Date.now();
    for (const progress of me.status.circuits) {
      const { circuit } = progress;
      if (progress.state === 'turn') {
        if ((this.deadlines.get(circuit) ?? -Infinity) < progress.deadline)
          this.deadlines.set(circuit, progress.deadline);
      } else {
        this.deadlines.delete(circuit);
        if (!this.driver.hasTask(circuit)) this.activities.delete(circuit);
      }
      // Accepted, the saved copy is of no further use (a reload after the upload but before its
      // own clean-up, or another tab, can leave one behind).
      if (progress.state === 'accepted' || me.status.done) this.forgetCandidate(me.principal.id, circuit);
    }
    this.emit();
  }

  private emit(): void {
    this.options.onChange(this.snapshot());
  }

  private setActivity(circuit: string, activity: TurnActivity): void {
    this.activities.set(circuit, activity);
    this.emit();
  }

  private forgetCandidate(principalId: string, circuit: string): void {
    if (this.candidatesForgotten.has(circuit)) return;
    this.candidatesForgotten.add(circuit);
    void candidateStore.delete(candidateKey(this.options.ceremonyId, principalId, circuit)).catch(() => {});
  }

  /** The turn's work: a saved whole key finished, else streamed where possible, else a whole key made and uploaded. */
  private async takeTurn(turn: DriverTurn): Promise<void> {
    const { circuit, ceremony, headIndex, signal } = turn;
    const me = this.me!;
    const key = candidateKey(this.options.ceremonyId, me.principal.id, circuit);
    const remember = (hash: string): void => {
      turn.onHash(hash);
      this.rememberLocalHash(circuit, hash);
    };
    try {
      // A standby turn is taken by a download: a saved key is not uploaded on one (it is left for a turn of its own).
      let candidate = turn.standby ? undefined : await candidateStore.get(key).catch(() => undefined);
      if (candidate && candidate.baseIndex !== headIndex) {
        await candidateStore.delete(key).catch(() => {});
        candidate = undefined;
      }
      // A whole key saved by an earlier visit is finished first; otherwise the turn streams where
      // the coordinator takes deltas and the kernel runs here.
      if (!candidate && (ceremony.contributionFormats ?? []).includes(DELTA_FORMAT)) {
        if (await this.streamTurn(circuit, me.principal.displayName, turn, remember)) return;
      }
      if (!candidate) candidate = await this.makeContribution(circuit, key, headIndex, me.principal.displayName, turn);
      remember(candidate.hash);

      const total = candidate.zkey.byteLength;
      let resumedFrom: number | null = null;
      this.setActivity(circuit, { stage: 'uploading', sent: 0, total, resumedFrom });
      await uploadContribution({
        circuit,
        zkey: candidate.zkey,
        fingerprint: `ceremony:${key}:${headIndex}:${total}:${candidate.hash.slice(0, 16)}`,
        csrfToken: this.options.api.csrfToken ?? '',
        onStart: (offset) => {
          resumedFrom = offset;
          this.setActivity(circuit, { stage: 'uploading', sent: offset, total, resumedFrom });
        },
        onProgress: (sent) => this.setActivity(circuit, { stage: 'uploading', sent, total, resumedFrom }),
        signal,
      });
      await candidateStore.delete(key).catch(() => {});
    } catch (error) {
      if (signal.aborted) throw error;
      const refusal =
        error instanceof ApiError ? error : new ApiError(0, 'browser', (error as Error).message ?? String(error));
      // A refusal of the file itself means this candidate will never be accepted: drop it.
      if (refusal.status === 413 || refusal.status === 422 || refusal.code === 'contribution.not_next')
        await candidateStore.delete(key).catch(() => {});
      throw refusal;
    }
  }

  /**
   * The streamed turn (streamed-turn.ts). Resolves false, having done nothing, when this browser
   * cannot stream (no kernel): the caller then moves whole keys.
   */
  private async streamTurn(
    circuit: string,
    name: string,
    { signal, taken }: DriverTurn,
    onHash: (hash: string) => void,
  ): Promise<boolean> {
    const startedAt = Date.now();
    try {
      await streamedTurn({
        circuit,
        name,
        takeTypedEntropy: this.options.takeTypedEntropy,
        csrfToken: this.options.api.csrfToken ?? '',
        signal,
        onProgress: (progress) => this.setActivity(circuit, { stage: 'streaming', startedAt, ...progress }),
        onHash,
        taken,
      });
    } catch (error) {
      if (error instanceof StreamingUnavailable) return false;
      throw error;
    }
    return true;
  }

  private async makeContribution(
    circuit: string,
    key: string,
    headIndex: number,
    name: string,
    { signal, taken }: DriverTurn,
  ): Promise<StoredCandidate> {
    const head = await downloadZkey(
      circuit,
      headIndex,
      (loaded, total) => this.setActivity(circuit, { stage: 'downloading', loaded, total }),
      signal,
    );
    await taken();
    this.setActivity(circuit, { stage: 'computing', percent: 0, step: 'starting' });
    const computed = await computeContribution(
      { head, name, typedEntropy: this.options.takeTypedEntropy() },
      (percent, step) => this.setActivity(circuit, { stage: 'computing', percent, step }),
      signal,
    );
    this.setActivity(circuit, { stage: 'computing', percent: 100, step: 'done' });
    const candidate: StoredCandidate = {
      key,
      baseIndex: headIndex,
      zkey: computed.zkey,
      hash: computed.hash,
      savedAt: Date.now(),
    };
    // Without IndexedDB (private windows in some browsers) the upload still works; it only cannot survive a reload.
    await candidateStore.put(candidate).catch(() => {});
    return candidate;
  }

  private loadLocalHashes(principalId: string): void {
    const prefix = `${this.options.ceremonyId}|${principalId}|`;
    for (const [key, hash] of Object.entries(readJson<Record<string, string>>(LOCAL_HASHES_KEY) ?? {})) {
      if (key.startsWith(prefix)) this.localHashes.set(key.slice(prefix.length), hash);
    }
  }

  private rememberLocalHash(circuit: string, hash: string): void {
    this.localHashes.set(circuit, hash);
    const all = readJson<Record<string, string>>(LOCAL_HASHES_KEY) ?? {};
    all[`${this.options.ceremonyId}|${this.me?.principal.id ?? ''}|${circuit}`] = hash;
    try {
      localStorage.setItem(LOCAL_HASHES_KEY, JSON.stringify(all));
    } catch {
      // storage full or off: the comparison is a convenience
    }
  }
}

function readJson<T>(key: string): T | undefined {
  try {
    const raw = localStorage.getItem(key);
    return raw ? (JSON.parse(raw) as T) : undefined;
  } catch {
    return undefined;
  }
}
