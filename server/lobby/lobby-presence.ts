/**
 * Who is there: when each waiting contributor was last seen, when each turn's client was last heard
 * from, when a presence stream closed, and each taken turn's upload progress. Observations rather
 * than lobby state, so kept in memory only: after a restart every entry and taken turn starts from
 * the restart (with no stream closed, every upload started), so a restart makes nobody away,
 * silent, gone or stalled. What the observations mean is lobby-rules.ts's.
 */
import {
  awayCause,
  goneSince,
  isPassedOver,
  isProgress,
  lastHeard,
  type LobbyRules,
  type TurnTimes,
  type UploadProgress,
} from './lobby-rules.ts';
import type { QueueRow } from './lobby-statements.ts';

export class LobbyPresence {
  /** When each contributor was last seen. */
  private readonly seenAt = new Map<string, number>();
  /** When the client of each taken turn was last heard from, by contributor. */
  private readonly heardAt = new Map<string, number>();
  /** When each contributor's presence stream closed, if they have not been seen since. */
  private readonly disconnectedAt = new Map<string, number>();
  /** Each taken turn's upload at its last progress. */
  private readonly progressOf = new Map<string, UploadProgress>();

  constructor(private readonly rules: LobbyRules) {}

  /** Starts the observations at `start` for the contributors waiting and the taken turns' holders. */
  restart(waiting: Iterable<string>, holders: Iterable<string>, start: number): void {
    for (const contributorId of waiting) this.seenAt.set(contributorId, start);
    for (const contributorId of holders) {
      this.heardAt.set(contributorId, start);
      this.progressOf.set(contributorId, { uploadId: '', offset: 0, at: start });
    }
  }

  /** Their client asked for news: seen now, and any stream they closed no longer counts. */
  seen(contributorId: string, now: number): void {
    this.seenAt.set(contributorId, now);
    this.disconnectedAt.delete(contributorId);
  }

  /** Queued again right after a verdict: they are there (their page or terminal just uploaded). */
  requeued(contributorId: string, now: number): void {
    this.seenAt.set(contributorId, now);
  }

  /** Their presence stream closed now (meaningless when the grace is 0). */
  streamClosed(contributorId: string, now: number): void {
    if (this.rules.disconnectGraceMs > 0) this.disconnectedAt.set(contributorId, now);
  }

  /** Whether any stream closed and was not followed by a sign of life. */
  anyClosed(): boolean {
    return this.disconnectedAt.size > 0;
  }

  closedAt(contributorId: string): number | undefined {
    return this.disconnectedAt.get(contributorId);
  }

  /** When the contributor's presence stream closed, if their grace ran out by `now` and they were not seen since. */
  goneSince(contributorId: string, now: number): number | undefined {
    return goneSince(this.disconnectedAt.get(contributorId), now, this.rules);
  }

  /** Whether a waiting contributor is passed over at `now` (lobby-rules.ts isPassedOver). */
  isGone(contributorId: string, now: number): boolean {
    return isPassedOver(this.seenAt.get(contributorId), this.disconnectedAt.get(contributorId), now, this.rules);
  }

  /**
   * A circuit's waiting rows (FIFO order) as the rules of order read them at `now`
   * (turn-order.ts WaitingEntry), the row kept beside; an entry whose contributor is gone counts as
   * away, and is added to `newlyAway` when given (the caller marks it so once the cursor is closed).
   * Read as far as the caller reads, and never past `limit` rows.
   */
  *line(rows: Iterable<QueueRow>, now: number, newlyAway?: QueueRow[], limit = Infinity) {
    let read = 0;
    for (const row of rows) {
      if (read++ >= limit) return;
      const gone = row.away === 0 && this.isGone(row.contributor_id, now);
      if (gone) newlyAway?.push(row);
      yield { row, away: row.away === 1 || gone, eligibleAt: row.eligible_at, passedOn: row.passed_on === 1 };
    }
  }

  /** Why a waiting contributor passed over at `now` is away (lobby-rules.ts awayCause). */
  awayCause(contributorId: string, now: number): { seenAt: number; disconnectedAt?: number } {
    return awayCause(this.seenAt.get(contributorId), this.disconnectedAt.get(contributorId), now, this.rules);
  }

  /** A turn's client was heard from (a download, a heartbeat, an upload request): it is there. */
  heard(contributorId: string, now: number): void {
    this.heardAt.set(contributorId, now);
    this.disconnectedAt.delete(contributorId);
  }

  /** When a taken turn's client was last heard from (at the latest, when it took the turn). */
  lastHeard(contributorId: string, turn: TurnTimes): number {
    return lastHeard(this.heardAt.get(contributorId), turn);
  }

  progress(contributorId: string): UploadProgress | undefined {
    return this.progressOf.get(contributorId);
  }

  /** Bytes of the holder's upload arrived: its progress now, if they gained enough (lobby-rules.ts isProgress). */
  uploaded(contributorId: string, upload: { id: string; offset: number; size?: number }, now: number): void {
    if (isProgress(this.progressOf.get(contributorId), upload, this.rules))
      this.progressOf.set(contributorId, { uploadId: upload.id, offset: upload.offset, at: now });
  }

  /** The contributor's turn ended: nothing of it is heard or uploaded any more. */
  turnEnded(contributorId: string): void {
    this.heardAt.delete(contributorId);
    this.progressOf.delete(contributorId);
  }
}
