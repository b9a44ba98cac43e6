/**
 * The coordinator's one flow, upload → contribution row → verification job → verdict → chain head
 * → transcript → receipt, and its recovery after a crash. HTTP handlers call into it; it calls the
 * core for everything about zkeys and the lobby for everything about turns.
 *
 * Crash safety: the transcript (core) is the commit point of a link; SQLite records the verdict.
 * A commit that fails for a reason that says nothing about the contribution (the data folder locked
 * by another process, a full disk) is tried again after a while, the contribution still
 * `verifying`, as long as its candidate is intact (commitRetryDelaysMs). A contribution left
 * `verifying` without a verdict (a crash, or retries run out) is settled from the
 * transcript: already in it → accepted; otherwise, at start-up and with its candidate intact in
 * this folder's uploads → verified again; otherwise → an error the contributor sees, and they are
 * put back in the queue.
 * Every verdict goes through recordVerdict: its state comes from the contribution life cycle
 * (contributions/contribution-lifecycle.ts), and the contribution row and the lobby's turn record
 * it in one transaction.
 */
import { rm } from 'node:fs/promises';
import { flushAhead } from '../core/fs/atomic-write.ts';
import { commitPreverifiedContribution } from '../core/ceremony/extend-chain.ts';
import { openCeremony, type CeremonyState } from '../core/ceremony/open-ceremony.ts';
import type { CeremonyConfig } from '../core/config/ceremony-config.ts';
import { hashFile } from '../core/crypto/file-hash.ts';
import { isCoordinatorError, type ErrorCode } from '../core/errors.ts';
import type { Clock } from './clock.ts';
import { LobbyPacer } from './lobby/lobby-pacer.ts';
import { CeremonyStateReader, headIndexOf } from './ceremony-state-reader.ts';
import type { Db } from './store/database.ts';
import type { Lobby } from './lobby/lobby.ts';
import type { LobbyEvent } from './lobby/lobby-types.ts';
import type { ContributionRow, ContributionStore } from './contributions/contribution-store.ts';
import { settleVerdict, type SettledVerdict, type Verdict } from './contributions/contribution-lifecycle.ts';
import type { ReceiptSigner } from './contributions/receipt-signer.ts';
import type { VerificationOutcome, VerificationRequest } from '../core/verifier-contract/verifier-contract.ts';
import { headPreparations, requestFromState } from './contributions/verification-request.ts';
import { committedAs, hashCandidate, type SubmittedUpload } from './contributions/candidate-store.ts';
import {
  candidateIntact,
  DEFAULT_COMMIT_RETRY_DELAYS_MS,
  inOwnUploads,
  LOST_IN_RESTART,
  linkNoLongerFits,
  wait,
} from './contributions/commit-retry.ts';
import type { VerificationDispatcher } from './verification-dispatch/verification-dispatcher.ts';

export interface ServiceLog {
  info(message: string, fields?: Record<string, unknown>): void;
  warn(message: string, fields?: Record<string, unknown>): void;
}

/** A verdict on an uploaded contribution, as an observer (metrics) sees it. */
export type ContributionDecision =
  | { circuit: string; outcome: 'accepted'; index: number; sinceUploadMs: number }
  | { circuit: string; outcome: 'refused'; code: ErrorCode; sinceUploadMs: number };

/** Told what the service does (metrics); it only counts, and must not throw. */
export interface ServiceObserver {
  lobbyEvent(event: LobbyEvent): void;
  contributionDecided(decision: ContributionDecision): void;
}

export interface CeremonyServiceDeps {
  config: CeremonyConfig;
  db: Db;
  clock: Clock;
  lobby: Lobby;
  contributions: ContributionStore;
  dispatcher: VerificationDispatcher;
  receipts: ReceiptSigner;
  log: ServiceLog;
  /** How often deadlines are checked and turns granted (ms). */
  tickIntervalMs?: number;
  observer?: ServiceObserver;
  /**
   * The waits before each new try of a verified contribution's commit that failed for a reason
   * other than the link no longer fitting (default: 1 s doubling to 30 s, about 14 minutes in all,
   * longer than a `ceremony contribute` of the largest circuit holds the data folder).
   */
  commitRetryDelaysMs?: readonly number[];
}

export class CeremonyService {
  private readonly pacer: LobbyPacer;
  private readonly pending = new Set<Promise<void>>();
  private readonly stateReader: CeremonyStateReader;
  /** Contributions whose commit is being tried: a repeated outcome meanwhile is not applied beside it. */
  private readonly committing = new Set<string>();
  /** Ends the waits between commit tries on stop: those contributions stay `verifying` for the next start. */
  private stopping = new AbortController();

  constructor(private readonly deps: CeremonyServiceDeps) {
    this.stateReader = new CeremonyStateReader(deps.config.dataDir);
    const { lobby, db, clock } = deps;
    const onEvents = (events: readonly LobbyEvent[]): void => this.report(events);
    this.pacer = new LobbyPacer({ lobby, db, clock, tickIntervalMs: deps.tickIntervalMs ?? 1000, onEvents });
    deps.dispatcher.onOutcome((outcome) => {
      const work = this.applyOutcome(outcome).catch((error: unknown) => {
        deps.log.warn('could not apply a verification outcome', {
          contributionId: outcome.contributionId,
          error: String(error),
        });
      });
      this.pending.add(work);
      void work.finally(() => this.pending.delete(work));
    });
  }

  /** Reconciles unfinished work, then starts granting turns and expiring deadlines. */
  async start(): Promise<void> {
    await this.recover();
    await this.prepareHeads();
    this.pacer.start();
  }

  async stop(): Promise<void> {
    this.stopping.abort();
    this.stopping = new AbortController();
    this.pacer.stop();
    await Promise.allSettled([...this.pending]);
    // The last verdicts' queue-log entries, into its public file before the database closes.
    this.deps.lobby.queueLog.flush();
  }

  /** Runs the lobby's clock now (LobbyPacer.tick). */
  tick(): void {
    this.pacer.tick();
  }

  /**
   * Something the lobby hears brought its next due moment forward without a move (a presence stream
   * closed: the grace runs out before the interval's next tick): the clock's next tick is set again.
   */
  dueChanged(): void {
    this.pacer.scheduleDueTick();
  }

  /** A lobby move and the tick it calls for, in one transaction (LobbyPacer.moveAndTick). */
  moveAndTick<T>(move: () => T, ticks?: (result: T) => boolean): T {
    return this.pacer.moveAndTick(move, ticks);
  }

  /**
   * A signed-in contributor downloads a circuit's head or inputs (Lobby.takeTurn): their turn is
   * taken, or the circuit's untaken turn becomes theirs on standby; what changed is reported as a
   * tick's events are.
   */
  takeTurn(contributorId: string, circuit: string): void {
    const events = this.deps.lobby.takeTurn(contributorId, circuit);
    if (events.length > 0) this.pacer.moved(events);
  }

  /** Calls `watcher` after every tick and standby take (LobbyPacer.watch). Returns the unsubscribe. */
  watchLobby(watcher: () => void): () => void {
    return this.pacer.watch(watcher);
  }

  private report(events: readonly LobbyEvent[]): void {
    for (const event of events) {
      const { type, ...fields } = event;
      this.deps.log.info(`lobby ${type.replaceAll('_', ' ')}`, fields);
      this.deps.observer?.lobbyEvent(event);
    }
  }

  /** The ceremony on disk (chains, transcript), re-read only when the transcript changed. Read-only. */
  ceremonyState(): Promise<CeremonyState> {
    return this.stateReader.read();
  }

  async headIndex(circuit: string): Promise<number> {
    return headIndexOf(await this.ceremonyState(), circuit);
  }

  /**
   * Finished uploads still waiting for their verdict (the candidates of `verifying` rows). The
   * upload sweep and a replacing upload never delete these, however long the verifier takes.
   */
  candidatesAwaitingVerdict(): Set<string> {
    return new Set(this.deps.contributions.byStatus('verifying').map((row) => row.candidatePath));
  }

  /**
   * A finished upload by the holder of the turn: record it, then send it to verification. Its
   * candidate row (made at the upload's creation) gives the head it extends and, for a delta, the
   * hashes taken as it arrived; a whole key is hashed here, onto the same row. The turn is the
   * lobby's to check, in the transaction that records the submission.
   */
  async submit(upload: SubmittedUpload): Promise<ContributionRow> {
    const { lobby, contributions, clock } = this.deps;
    const candidate = contributions.candidates.get(upload.path);
    // An upload created by a version before the candidates table: the head is the current one.
    const headIndex = candidate?.headIndex ?? (await this.headIndex(upload.circuit));
    // An upload refused already is never hashed: no link can name it, and its refusal must cost no pass over its bytes.
    const hashed = upload.refusal || candidate?.fileHash ? undefined : await hashCandidate(upload.path);
    const row = this.deps.db.transaction(() => {
      if (!candidate)
        contributions.candidates.create({
          uploadPath: upload.path,
          circuit: upload.circuit,
          contributorId: upload.principal.id,
          headIndex,
          createdAt: clock.now(),
        });
      if (hashed) contributions.candidates.recordHashes(upload.path, hashed);
      const created = contributions.create({
        circuit: upload.circuit,
        contributorId: upload.principal.id,
        contributorName: upload.principal.displayName,
        headIndex,
        candidatePath: upload.path,
        size: upload.size,
        // Refused before it was hashed: recorded with an empty hash.
        fileHash: upload.refusal ? '' : (hashed?.fileHash ?? candidate?.fileHash ?? ''),
        createdAt: clock.now(),
      });
      lobby.markSubmitted(upload.principal.id, upload.circuit, created.id);
      return created;
    })();
    if (upload.refusal) {
      this.deps.log.info('contribution uploaded, refused as it arrived', {
        contributionId: row.id,
        circuit: row.circuit,
      });
      await this.applyOutcome({ contributionId: row.id, status: 'invalid', ...upload.refusal });
      return row;
    }
    this.deps.log.info('contribution uploaded, verifying', {
      contributionId: row.id,
      circuit: row.circuit,
      contributor: row.contributorId,
    });
    // Flushed while it is verified, so the commit's own flush (commitFile) finds little to do.
    const flushing = flushAhead(row.candidatePath);
    this.pending.add(flushing);
    void flushing.finally(() => this.pending.delete(flushing));
    await this.deps.dispatcher.enqueue(await this.requestFor(row));
    return row;
  }

  /** The request of a contribution, from its stored rows alone (verificationRequest). */
  private async requestFor(row: ContributionRow): Promise<VerificationRequest> {
    const candidate = this.deps.contributions.candidates.get(row.candidatePath);
    return requestFromState(row, candidate, await this.ceremonyState());
  }

  private async applyOutcome(outcome: VerificationOutcome): Promise<void> {
    const { contributions } = this.deps;
    const row = contributions.get(outcome.contributionId);
    // Unknown, already decided, or being committed: a duplicate outcome.
    if (!row || row.status !== 'verifying' || this.committing.has(row.id)) return;
    try {
      // An outcome for a candidate of another folder (a restored database beside its original,
      // on the same Redis): never committed from there, nor removed; its author goes again.
      if (!inOwnUploads(this.deps.config.dataDir, row.candidatePath)) {
        this.deps.log.warn('a verification outcome for an upload outside this data folder, settled as lost', {
          contributionId: row.id,
        });
        return await this.refuse(row, LOST_IN_RESTART);
      }
      // The upload's tus metadata file is of no use once the verdict is in; it goes before the
      // verdict is recorded, so that whoever sees the verdict finds the uploads folder clean.
      await rm(`${row.candidatePath}.json`, { force: true }).catch((error: unknown) =>
        this.deps.log.warn('upload metadata not removed', { circuit: row.circuit, error: String(error) }),
      );
      await this.decide(row, outcome);
    } finally {
      // A recorded verdict granted the circuit's next turn already (recordVerdict); this one also
      // covers an outcome that recorded none, and tells the held polls to look again.
      this.tick();
    }
  }

  private async decide(row: ContributionRow, outcome: VerificationOutcome): Promise<void> {
    const { clock, log } = this.deps;
    if (outcome.status === 'valid') {
      this.committing.add(row.id);
      try {
        await this.commitVerified(row, outcome.contributionHash);
      } finally {
        this.committing.delete(row.id);
      }
      return;
    }
    // A verifier error's text (an OS error, a stack) names server paths and internals: it is
    // logged, and the contributor gets the code with plain words.
    if (outcome.status === 'error') log.warn('verification failed', { contributionId: row.id, error: outcome.message });
    const refusal: { code: ErrorCode; message: string } =
      outcome.status === 'invalid'
        ? { code: outcome.code, message: outcome.message }
        : {
            code: 'verification.unavailable',
            message: 'the contribution could not be verified; please contribute again',
          };
    // The verifier's error is on what was uploaded (a file it could not read through): a missed turn,
    // as a refusal is; the coordinator's own failures (settleUnfinished) are not the uploader's.
    await this.refuse(row, { event: outcome.status === 'invalid' ? 'refused' : 'unverifiable', ...refusal }, true);
    log.info('contribution refused', {
      contributionId: row.id,
      circuit: row.circuit,
      code: refusal.code,
      sinceUploadMs: clock.now() - row.createdAt,
    });
  }

  /**
   * Commits a verified contribution, trying again after a while when the commit fails for a reason
   * that says nothing about it (see linkNoLongerFits) and its candidate is still there: the commit
   * checks the head and the file's hash again under the lock each time, so a late try can only
   * commit the bytes verified, on the head they were verified on.
   */
  private async commitVerified(row: ContributionRow, contributionHash: string): Promise<void> {
    const { clock, log } = this.deps;
    const delays = this.deps.commitRetryDelaysMs ?? DEFAULT_COMMIT_RETRY_DELAYS_MS;
    // This service's run: stop() aborts it (and a later start() runs under a new one), so a try under
    // way when the service stops is the last.
    const run = this.stopping.signal;
    for (let attempt = 0; ; attempt++) {
      try {
        const accepted = await commitPreverifiedContribution(this.deps.config.dataDir, row.circuit, {
          candidatePath: row.candidatePath,
          headIndex: row.headIndex,
          fileHash: row.fileHash,
          contributionHash,
          contributor: row.contributorName,
          ...committedAs(this.deps.contributions.candidates.get(row.candidatePath), row.fileHash),
        });
        this.recordVerdict(row, {
          event: 'committed',
          chainIndex: accepted.index,
          contributionHash,
          transcriptHash: accepted.transcriptHash,
        });
        log.info('contribution accepted', {
          contributionId: row.id,
          circuit: row.circuit,
          index: accepted.index,
          sinceUploadMs: clock.now() - row.createdAt,
        });
        return;
      } catch (error) {
        if (linkNoLongerFits(error)) {
          this.recordVerdict(row, { event: 'not_committed', code: error.code, message: error.message });
          await rm(row.candidatePath, { force: true });
          log.warn('verified contribution not committed', { contributionId: row.id, code: error.code });
          return;
        }
        const reason = isCoordinatorError(error) ? { code: error.code } : { error: String(error) };
        if (run.aborted) return; // stopping: settled at the next start
        const delay = delays[attempt];
        if (delay !== undefined && (await candidateIntact(row.candidatePath))) {
          log.warn('could not commit a verified contribution yet; trying again', {
            contributionId: row.id,
            ...reason,
            attempt: attempt + 1,
            inMs: delay,
          });
          if (!(await wait(delay, run))) return; // stopping: settled at the next start
          continue;
        }
        // The transcript tells whether the link got committed after all.
        log.warn('could not commit a verified contribution', { contributionId: row.id, ...reason });
        await this.settleUnfinished(row, await openCeremony(this.deps.config.dataDir), { reverify: false });
        return;
      }
    }
  }

  /**
   * Records a verdict on a `verifying` contribution in both of its stores, the contribution row
   * (with its receipt when accepted) and the lobby's turn, in one transaction: a crash or a throw
   * between the two cannot leave one changed without the other. The state both record comes from
   * the life cycle's transition. Returns false, changing nothing, when the contribution is
   * already decided (outcomes may be delivered twice).
   */
  private recordVerdict(row: ContributionRow, verdict: Verdict, errorCausedByUpload = false): boolean {
    const { contributions, lobby, clock, db, receipts, config } = this.deps;
    let grants: LobbyEvent[] = [];
    const recorded = db.transaction(() => {
      const current = contributions.get(row.id)?.status;
      if (current !== 'verifying') return undefined;
      const settled = settleVerdict(current, verdict);
      const now = clock.now();
      if (!contributions.finish(row.id, settled, now)) return undefined;
      // The verdict is in: nothing reads the candidate's facts any more.
      contributions.candidates.remove(row.candidatePath);
      if (settled.status === 'accepted') {
        contributions.saveReceipt(
          row.id,
          receipts.sign({
            ceremony: config.id,
            circuit: row.circuit,
            index: settled.chainIndex,
            contributor: row.contributorName,
            contributionHash: settled.contributionHash,
            fileHash: row.fileHash,
            acceptedAt: new Date(now).toISOString(),
          }),
        );
      }
      // False only if the lobby already ended this turn, which one transaction per verdict rules
      // out; the row is brought in step rather than left verifying for ever.
      lobby.recordVerdict(row.id, settled, { errorCausedByUpload });
      // The circuit is free: its next turn is granted as the verdict commits, not after the
      // verdict's own sync and what follows it (the candidate removed, the verdict logged). Not
      // before start(), whose first tick comes after the start-up's settling.
      if (this.pacer.running) grants = lobby.tick();
      return settled;
    })();
    if (recorded) this.observeVerdict(row, recorded);
    if (grants.length > 0) this.pacer.moved(grants);
    return recorded !== undefined;
  }

  /**
   * Tells the observer (metrics) of a verdict: accepted without a code, refused with one. Called
   * where every verdict is recorded, so those settled after a restart are counted too.
   */
  private observeVerdict(row: ContributionRow, settled: SettledVerdict): void {
    const sinceUploadMs = this.deps.clock.now() - row.createdAt;
    this.deps.observer?.contributionDecided(
      settled.status === 'accepted'
        ? { circuit: row.circuit, outcome: 'accepted', index: settled.chainIndex, sinceUploadMs }
        : { circuit: row.circuit, outcome: 'refused', code: settled.code, sinceUploadMs },
    );
  }

  /**
   * Records a verdict against the contribution, puts its author back in line (a missed turn when
   * refused, or when an error was `causedByUpload`), drops the file.
   */
  private async refuse(
    row: ContributionRow,
    verdict: Verdict & { event: 'refused' | 'unverifiable' },
    causedByUpload = false,
  ): Promise<void> {
    this.recordVerdict(row, verdict, causedByUpload);
    if (inOwnUploads(this.deps.config.dataDir, row.candidatePath)) await rm(row.candidatePath, { force: true });
  }

  /**
   * Asks the verifiers to cache the combination of every head a contribution may still extend
   * (HeadPreparationRequest): contribution 0's is otherwise first computed when the first turn's
   * upload is being checked, doubling that verdict's work (a minute at 2^22). A head already
   * cached costs the verifier one small read. Nothing waits for the answers.
   */
  private async prepareHeads(): Promise<void> {
    for (const request of headPreparations(await this.ceremonyState())) this.deps.dispatcher.prepareHead(request);
  }

  /** Start-up reconciliation of contributions left `verifying` by a crash. */
  private async recover(): Promise<void> {
    const unfinished = this.deps.contributions.byStatus('verifying');
    if (unfinished.length === 0) return;
    const state = await openCeremony(this.deps.config.dataDir);
    for (const row of unfinished) await this.settleUnfinished(row, state, { reverify: true });
  }

  /** Settles a `verifying` contribution whose verdict was never applied (see the file comment). */
  private async settleUnfinished(
    row: ContributionRow,
    state: CeremonyState,
    options: { reverify: boolean },
  ): Promise<void> {
    const { log } = this.deps;
    const committed = state.transcript.entries.find(
      (e) => e.type === 'contribution' && e.circuit === row.circuit && e.fileHash === row.fileHash,
    );
    if (committed && committed.type === 'contribution') {
      this.recordVerdict(row, {
        event: 'committed',
        chainIndex: committed.index,
        contributionHash: committed.contributionHash,
        transcriptHash: committed.hash,
      });
      log.info('recovered an accepted contribution', { contributionId: row.id, index: committed.index });
      return;
    }
    if (
      options.reverify &&
      inOwnUploads(this.deps.config.dataDir, row.candidatePath) &&
      (await hashFile(row.candidatePath).then(
        (hash) => hash === row.fileHash,
        () => false,
      ))
    ) {
      log.info('re-enqueueing an unfinished verification', { contributionId: row.id });
      await this.deps.dispatcher.enqueue(await this.requestFor(row));
      return;
    }
    const message = options.reverify
      ? LOST_IN_RESTART.message
      : 'the coordinator could not store your verified contribution; please contribute again';
    await this.refuse(row, { event: 'unverifiable', code: 'verification.unavailable', message });
    log.warn('unfinished contribution settled as an error', { contributionId: row.id, reason: message });
  }
}
