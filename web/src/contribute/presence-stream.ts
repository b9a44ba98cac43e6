/**
 * Holds the coordinator's presence stream (`GET /api/me/presence`) open while the page is in the
 * ceremony: when the tab closes, the coordinator learns it at once and passes the contributor over
 * (place kept) instead of waiting for their polls to stop and their turn to go untaken. The browser
 * re-opens a dropped stream by itself; a refusal (too many streams, the coordinator full, an older
 * coordinator without the route) closes it, and it is tried again later: polls keep the place
 * meanwhile, as they always did.
 */
const REOPEN_AFTER_REFUSAL_MS = 60_000;

export class PresenceStream {
  private source: EventSource | undefined;
  private retry: ReturnType<typeof setTimeout> | undefined;
  private stopped = false;

  constructor(private readonly url = '/api/me/presence') {}

  start(): void {
    if (this.source || this.stopped || typeof EventSource === 'undefined') return;
    const source = new EventSource(this.url);
    this.source = source;
    source.onerror = () => {
      // CONNECTING: the browser re-opens it (after the server's `retry`); CLOSED: it was refused.
      if (source.readyState !== EventSource.CLOSED) return;
      source.close();
      this.source = undefined;
      if (!this.stopped) this.retry = setTimeout(() => this.start(), REOPEN_AFTER_REFUSAL_MS);
    };
  }

  stop(): void {
    this.stopped = true;
    clearTimeout(this.retry);
    this.source?.close();
    this.source = undefined;
  }
}
