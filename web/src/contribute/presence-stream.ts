/**
 * Holds the coordinator's presence stream (`GET /api/me/presence`) open while the contributor is in
 * line or taking a turn: when the tab closes, the coordinator learns it at once and passes them over
 * (place kept) instead of waiting for their polls to stop and their turn to go untaken. Closed once
 * they are done or not in line, so idle tabs do not hold the coordinator's sockets. The browser
 * re-opens a dropped stream by itself; an answer that is not a stream closes it (a refusal: too many
 * streams, the coordinator full, an older coordinator without the route; or a proxy's 502 while the
 * coordinator restarts), and it is tried again after a pause growing from 2 s to a minute: soon
 * after a restart, rarely against a refusal. Polls keep the place meanwhile, as they always did.
 */
const FIRST_REOPEN_MS = 2000;
const LONGEST_REOPEN_MS = 60_000;

export class PresenceStream {
  private source: EventSource | undefined;
  private retry: ReturnType<typeof setTimeout> | undefined;
  private wanted = false;
  private reopenMs = FIRST_REOPEN_MS;

  constructor(private readonly url = '/api/me/presence') {}

  /** Opens the stream (true) or closes it (false); idempotent. */
  hold(wanted: boolean): void {
    this.wanted = wanted;
    if (wanted) this.open();
    else this.close();
  }

  private open(): void {
    if (this.source || this.retry || typeof EventSource === 'undefined') return;
    const source = new EventSource(this.url);
    this.source = source;
    source.onopen = () => (this.reopenMs = FIRST_REOPEN_MS);
    source.onerror = () => {
      // CONNECTING: the browser re-opens it (after the server's `retry`); CLOSED: it was refused.
      if (source.readyState !== EventSource.CLOSED) return;
      this.close();
      if (!this.wanted) return;
      this.retry = setTimeout(() => {
        this.retry = undefined;
        if (this.wanted) this.open();
      }, this.reopenMs);
      this.reopenMs = Math.min(this.reopenMs * 2, LONGEST_REOPEN_MS);
    };
  }

  private close(): void {
    clearTimeout(this.retry);
    this.retry = undefined;
    this.source?.close();
    this.source = undefined;
  }
}
