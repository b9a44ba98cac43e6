/**
 * The contributor's side of the ceremony as a state machine driven by the coordinator's
 * `GET /api/me` (the source of truth, so a reload resumes exactly where the server says):
 *
 *   pending → waiting (position, ETA) → turn → verifying → accepted
 *                 ↑                       │ (missed deadline / refused: back of the queue)
 *                 └───────────────────────┘
 *
 * While a circuit is this contributor's turn, the page runs the turn locally and keeps it alive
 * with heartbeats: streamed where the coordinator takes deltas (preparing → streaming →
 * submitted: streamed-turn.ts; nothing is kept, so a reload makes a new contribution), else with
 * whole keys (preparing → downloading → computing → uploading → submitted), the computed key kept
 * in IndexedDB until uploaded so a reload mid-upload resumes the tus upload from the server's offset.
 */
import type { ApiClient } from '../../../client/api-client.ts';
import { ApiError } from '../../../client/api-client.ts';
import type { CeremonyView, MeView, TurnHeartbeat } from '../api/api-types.ts';
import { eventSourcePresence, growingReopenPause, PresenceHolder } from '../../../client/presence-holder.ts';
import { ACTIVE_POLL_MS, VERDICT_POLL_MS, waitingPollMs } from '../../../client/queue-poll-pace.ts';
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
  /** Uploaded; `afterPoll` is the last poll started before, whose answer may still say `turn`. */
  | { stage: 'submitted'; afterPoll: number }
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

/** The heartbeat pace until the coordinator's first answer sets its own (it ends silent turns). */
const HEARTBEAT_EVERY_MS = 30_000;
/** Poll pace when in no queue (done, or not joined yet); in a queue, client/queue-poll-pace.ts. */
const NOT_WAITING_POLL_MS = 5000;
const RETRY_AFTER_MS = 5_000;
const LOCAL_HASHES_KEY = 'ceremony.localHashes';
/** A saved candidate older than this is dropped at start: its turn is long over (turns last at most an hour). */
const CANDIDATE_MAX_AGE_MS = 24 * 60 * 60 * 1000;

export class ContributorSession {
  private me: MeView | null = null;
  private clockOffsetMs = 0;
  private heartbeatEveryMs = HEARTBEAT_EVERY_MS;
  private connectionError: string | null = null;
  private readonly activities = new Map<string, TurnActivity>();
  private readonly deadlines = new Map<string, number>();
  private readonly lastHeartbeat = new Map<string, number>();
  private readonly tasks = new Map<string, AbortController>();
  private readonly localHashes = new Map<string, string>();
  /** Circuits whose saved candidate this page has already deleted (once accepted), not to ask IndexedDB every poll. */
  private readonly candidatesForgotten = new Set<string>();
  private pollsStarted = 0;
  private pollTimer: ReturnType<typeof setTimeout> | undefined;
  private polling: Promise<void> | undefined;
  /** Asked for while a poll was under way (whose answer may predate what prompted it): polled again at once. */
  private pollAgain = false;
  private stopped = false;
  private readonly presence = new PresenceHolder({
    connect: eventSourcePresence(),
    reopenPauseMs: growingReopenPause(),
  });

  constructor(private readonly options: SessionOptions) {}

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
    return this.tasks.size > 0 || (this.me?.status.circuits.some((c) => c.state === 'turn') ?? false);
  }

  get joined(): boolean {
    // An entry that left the queue (missed turns, or the coordinator) waits for a new join.
    if (this.me?.status.removed) return false;
    return (
      (this.me?.status.circuits.some((c) => c.state !== 'pending') ?? false) || (this.me?.contributions.length ?? 0) > 0
    );
  }

  start(): Promise<void> {
    // Keys of hundreds of MB must not pile up in the browser: whatever an earlier visit left
    // behind and never finished uploading is dropped after a day.
    void candidateStore.prune(Date.now() - CANDIDATE_MAX_AGE_MS).catch(() => {});
    return this.poll();
  }

  stop(): void {
    this.stopped = true;
    this.presence.hold(false);
    clearTimeout(this.pollTimer);
    for (const task of this.tasks.values()) task.abort();
  }

  async join(): Promise<void> {
    const seq = ++this.pollsStarted;
    this.accept(await this.options.api.post<MeView>('/api/me/join'), seq);
    if (!this.polling) this.schedule();
  }

  /**
   * Polls now and schedules the next one. Asked while a poll is under way, it polls again as soon as
   * that one ends: an upload that completed meanwhile must not wait a whole interval for its verdict.
   */
  poll(): Promise<void> {
    if (this.polling) {
      this.pollAgain = true;
      return this.polling;
    }
    this.polling = (async () => {
      clearTimeout(this.pollTimer);
      const seq = ++this.pollsStarted;
      try {
        // Not sent again inside: this loop is the retry, and the page says at once that it cannot connect.
        this.accept(await this.options.api.get<MeView>('/api/me', { resend: false }), seq);
        this.connectionError = null;
      } catch (error) {
        this.connectionError = error instanceof ApiError ? error.code : String(error);
        this.emit();
      } finally {
        this.polling = undefined;
        if (this.pollAgain && !this.stopped) {
          this.pollAgain = false;
          void this.poll();
        } else this.schedule();
      }
    })();
    return this.polling;
  }

  /** (Re)arms the next poll, at the pace the current state calls for. */
  private schedule(): void {
    clearTimeout(this.pollTimer);
    if (!this.stopped) this.pollTimer = setTimeout(() => void this.poll(), this.pollInterval());
  }

  /** By the best waiting position across circuits (client/queue-poll-pace.ts). */
  private pollInterval(): number {
    const circuits = this.me?.status.circuits ?? [];
    if (this.me?.status.done || !this.joined) return NOT_WAITING_POLL_MS;
    const positions = circuits.flatMap((c) => (c.state === 'waiting' ? [c.position] : []));
    if (circuits.some((c) => c.state === 'verifying')) return VERDICT_POLL_MS;
    const front = Math.min(Infinity, ...positions);
    return circuits.some((c) => c.state === 'turn') ? ACTIVE_POLL_MS : waitingPollMs(front);
  }

  private accept(me: MeView, seq: number): void {
    if (!this.me) this.loadLocalHashes(me.principal.id);
    this.me = me;
    this.presence.hold(this.joined && !me.status.done && !this.stopped);
    this.clockOffsetMs = me.now - Date.now();
    this.reconcile(me, seq);
    this.emit();
  }

  private emit(): void {
    this.options.onChange(this.snapshot());
  }

  private setActivity(circuit: string, activity: TurnActivity): void {
    this.activities.set(circuit, activity);
    this.emit();
  }

  /** Brings local work in line with the server's view of this contributor. */
  private reconcile(me: MeView, seq: number): void {
    for (const progress of me.status.circuits) {
      const { circuit } = progress;
      const task = this.tasks.get(circuit);
      if (progress.state === 'turn') {
        if (!this.deadlines.has(circuit) || (this.deadlines.get(circuit) ?? 0) < progress.deadline)
          this.deadlines.set(circuit, progress.deadline);
        const last = this.lastHeartbeat.get(circuit) ?? 0;
        if (Date.now() - last >= this.heartbeatEveryMs) void this.heartbeat(circuit);
        const activity = this.activities.get(circuit);
        // `turn` again after an upload means the upload was refused and the turn granted anew,
        // unless this answer was already on its way before the upload completed.
        const mayStart =
          !activity ||
          (activity.stage === 'submitted' && seq > activity.afterPoll) ||
          (activity.stage === 'failed' && Date.now() >= activity.retryAt);
        if (!task && mayStart) void this.takeTurn(circuit);
      } else {
        this.deadlines.delete(circuit);
        this.lastHeartbeat.delete(circuit);
        // The turn is gone (deadline missed, or the ceremony moved on): stop any local work on it.
        // Once uploaded (verifying/accepted) the task is finishing by itself and is left alone.
        if (task && (progress.state === 'waiting' || progress.state === 'pending')) task.abort();
        if (!task) this.activities.delete(circuit);
      }
      // Accepted, the saved copy is of no further use (a reload after the upload but before its
      // own clean-up, or another tab, can leave one behind).
      if (progress.state === 'accepted' || me.status.done) this.forgetCandidate(me.principal.id, circuit);
    }
  }

  private forgetCandidate(principalId: string, circuit: string): void {
    if (this.candidatesForgotten.has(circuit)) return;
    this.candidatesForgotten.add(circuit);
    void candidateStore.delete(candidateKey(this.options.ceremonyId, principalId, circuit)).catch(() => {});
  }

  private async heartbeat(circuit: string): Promise<void> {
    this.lastHeartbeat.set(circuit, Date.now());
    try {
      const { deadline, heartbeatEveryMs } = await this.options.api.post<TurnHeartbeat>(
        `/api/circuits/${encodeURIComponent(circuit)}/heartbeat`,
      );
      this.deadlines.set(circuit, deadline);
      // Older coordinators answer the deadline only.
      if (Number.isFinite(heartbeatEveryMs) && heartbeatEveryMs > 0) this.heartbeatEveryMs = heartbeatEveryMs;
      this.emit();
    } catch {
      // The next poll shows whether the turn is still ours; a failed heartbeat is retried then.
      this.lastHeartbeat.set(
        circuit,
        Date.now() - this.heartbeatEveryMs + Math.min(RETRY_AFTER_MS, this.heartbeatEveryMs),
      );
    }
  }

  private async takeTurn(circuit: string): Promise<void> {
    const me = this.me!;
    const controller = new AbortController();
    const { signal } = controller;
    this.tasks.set(circuit, controller);
    const key = candidateKey(this.options.ceremonyId, me.principal.id, circuit);
    try {
      this.setActivity(circuit, { stage: 'preparing' });
      const ceremony = await this.options.api.get<CeremonyView>('/api/ceremony');
      const headIndex = ceremony.circuits.find((c) => c.name === circuit)?.headIndex;
      if (headIndex === undefined) throw new ApiError(404, 'circuit.unknown', circuit);

      let candidate = await candidateStore.get(key).catch(() => undefined);
      if (candidate && candidate.baseIndex !== headIndex) {
        await candidateStore.delete(key).catch(() => {});
        candidate = undefined;
      }
      // A whole key saved by an earlier visit is finished first; otherwise the turn streams where
      // the coordinator takes deltas and the kernel runs here.
      if (!candidate && (ceremony.contributionFormats ?? []).includes(DELTA_FORMAT)) {
        if (await this.streamTurn(circuit, me.principal.displayName, signal)) return;
      }
      if (!candidate)
        candidate = await this.makeContribution(circuit, key, headIndex, me.principal.displayName, signal);
      this.rememberLocalHash(circuit, candidate.hash);

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
      this.setActivity(circuit, { stage: 'submitted', afterPoll: this.pollsStarted });
    } catch (error) {
      if (signal.aborted) {
        this.activities.delete(circuit);
      } else {
        const refusal =
          error instanceof ApiError ? error : new ApiError(0, 'browser', (error as Error).message ?? String(error));
        // A refusal of the file itself means this candidate will never be accepted: drop it.
        if (refusal.status === 413 || refusal.status === 422 || refusal.code === 'contribution.not_next')
          await candidateStore.delete(key).catch(() => {});
        this.setActivity(circuit, {
          stage: 'failed',
          code: refusal.code,
          message: refusal.message,
          retryAt: Date.now() + RETRY_AFTER_MS,
        });
      }
    } finally {
      this.tasks.delete(circuit);
      if (!this.stopped) void this.poll();
    }
  }

  /**
   * The streamed turn (streamed-turn.ts). Resolves false, having done nothing, when this browser
   * cannot stream (no kernel): the caller then moves whole keys.
   */
  private async streamTurn(circuit: string, name: string, signal: AbortSignal): Promise<boolean> {
    const startedAt = Date.now();
    try {
      await streamedTurn({
        circuit,
        name,
        takeTypedEntropy: this.options.takeTypedEntropy,
        csrfToken: this.options.api.csrfToken ?? '',
        signal,
        onProgress: (progress) => this.setActivity(circuit, { stage: 'streaming', startedAt, ...progress }),
        onHash: (hash) => this.rememberLocalHash(circuit, hash),
      });
    } catch (error) {
      if (error instanceof StreamingUnavailable) return false;
      throw error;
    }
    this.setActivity(circuit, { stage: 'submitted', afterPoll: this.pollsStarted });
    return true;
  }

  private async makeContribution(
    circuit: string,
    key: string,
    headIndex: number,
    name: string,
    signal: AbortSignal,
  ): Promise<StoredCandidate> {
    const head = await downloadZkey(
      circuit,
      headIndex,
      (loaded, total) => this.setActivity(circuit, { stage: 'downloading', loaded, total }),
      signal,
    );
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
