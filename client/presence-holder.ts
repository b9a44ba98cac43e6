/**
 * A contributor's hold on the coordinator's presence stream (`GET /api/me/presence`, server-sent
 * events), for the page and the terminal alike: open while they are in line or taking a turn, so
 * that when the tab closes or the command stops (Ctrl-C, a kill, a closed laptop's dropped link)
 * the coordinator learns it at once and passes them over, their place kept, instead of waiting for
 * the polls to stop and a turn to go untaken. Polls keep the place meanwhile, as they always did.
 *
 * One loop holds it: open the stream, wait until it ends, pause, open it again, while it is wanted.
 * What differs between the two clients is injected: how a stream is opened and read (the page's
 * EventSource, which re-opens a dropped stream by itself and ends only on a refusal; the terminal's
 * fetch stream with its own quiet watchdog) and how long to pause before the next one (the page
 * grows its pause from 2 s to a minute, back to 2 s once a stream opened; the terminal pauses 2 s,
 * or a minute after a refusal that is not a restart).
 */
import { ApiError, type ApiClient } from './api-client.ts';
import { looksLikeRestart, pause as realPause } from './restart-retry.ts';

/** One stream: resolves or rejects once it has ended (or `signal` closed it); `opened()` once it is open. */
export type PresenceConnect = (stream: { signal: AbortSignal; opened: () => void }) => Promise<void>;

/** The pause before the next stream, told how the last one ended (`failure`: what it rejected with). */
export type PresenceReopenPause = (ended: { opened: boolean; failed: boolean; failure: unknown }) => number;

export interface PresenceHolderOptions {
  connect: PresenceConnect;
  reopenPauseMs: PresenceReopenPause;
  /** Tests: a pause other than the real one. */
  pause?: (ms: number, signal: AbortSignal) => Promise<void>;
}

export class PresenceHolder {
  private running: { stop: AbortController; done: Promise<void> } | undefined;

  constructor(private readonly options: PresenceHolderOptions) {}

  /** Opens the stream (true) or closes it (false); idempotent. */
  hold(wanted: boolean): void {
    if (wanted && !this.running) {
      const stop = new AbortController();
      this.running = { stop, done: this.holdUntil(stop.signal) };
    } else if (!wanted && this.running) {
      this.running.stop.abort();
      this.running = undefined;
    }
  }

  /** Closes the stream; resolves once closed (the coordinator then counts the contributor gone after its grace). */
  async stop(): Promise<void> {
    const running = this.running;
    this.hold(false);
    await running?.done;
  }

  private async holdUntil(stop: AbortSignal): Promise<void> {
    const wait = this.options.pause ?? realPause;
    while (!stop.aborted) {
      let opened = false;
      let failed = false;
      let failure: unknown;
      try {
        await this.options.connect({ signal: stop, opened: () => (opened = true) });
      } catch (error) {
        failed = true;
        failure = error;
      }
      if (stop.aborted) return;
      await wait(this.options.reopenPauseMs({ opened, failed, failure }), stop);
    }
  }
}

const REOPEN_AFTER_MS = 2000;
const REOPEN_AFTER_REFUSAL_MS = 60_000;

/**
 * The terminal's pace: a stream that ended or fell quiet is opened again after a short pause, as is
 * one refused by a coordinator restarting (no answer, a proxy's 502), since this loop is its own
 * retry; one the coordinator refused (too many streams, all taken, a coordinator without the route)
 * a minute later.
 */
export function terminalReopenPauseMs(ended: { failure: unknown }): number {
  const refused = ended.failure instanceof ApiError && !looksLikeRestart(ended.failure.status, ended.failure.code);
  return refused ? REOPEN_AFTER_REFUSAL_MS : REOPEN_AFTER_MS;
}

/**
 * The page's pace: a stream the browser gave up on (a refusal, or a proxy's 502 while the
 * coordinator restarts) is tried again after a pause growing from 2 s to a minute: soon after a
 * restart, rarely against a refusal; once one opens, the pause starts again from 2 s.
 */
export function growingReopenPause(): PresenceReopenPause {
  let next = REOPEN_AFTER_MS;
  return ({ opened }) => {
    if (opened) next = REOPEN_AFTER_MS;
    const now = next;
    next = Math.min(next * 2, REOPEN_AFTER_REFUSAL_MS);
    return now;
  };
}

/** Until the stream's first event says the server's pace. */
const DEFAULT_KEEP_ALIVE_MS = 15_000;
const QUIET_BEATS = 3;
const MAX_PENDING_CHARS = 64 * 1024;

/**
 * A stream read through `client.fetch` (outside a browser: the terminal client), until it ends,
 * falls quiet (no keep-alive for three beats) or the hold stops. Rejects with the coordinator's
 * refusal when it does not open.
 */
export function fetchedPresence(client: Pick<ApiClient, 'fetch'>): PresenceConnect {
  return async ({ signal: stop, opened }) => {
    const quiet = new AbortController();
    const signal = AbortSignal.any([stop, quiet.signal]);
    const response = await client.fetch('GET', '/api/me/presence', { signal, timeoutMs: Infinity, resend: false });
    opened();
    const reader = response.body!.getReader();
    const decoder = new TextDecoder();
    let keepAliveMs = DEFAULT_KEEP_ALIVE_MS;
    let watchdog: ReturnType<typeof setTimeout> | undefined;
    const rearm = () => {
      clearTimeout(watchdog);
      watchdog = setTimeout(() => quiet.abort(), QUIET_BEATS * keepAliveMs);
    };
    rearm();
    try {
      let text = '';
      for (;;) {
        const { value, done } = await reader.read();
        if (done) return;
        text += decoder.decode(value, { stream: true });
        const hello = /event: hello\ndata: (\{.*\})\n/.exec(text);
        if (hello) {
          const pace = Number((JSON.parse(hello[1]!) as { keepAliveMs?: unknown }).keepAliveMs);
          if (Number.isFinite(pace) && pace > 0) keepAliveMs = pace;
        }
        // Only an unfinished event is kept; a server that never finishes one is not buffered for ever.
        const end = text.lastIndexOf('\n\n');
        if (end >= 0) text = text.slice(end + 2);
        if (text.length > MAX_PENDING_CHARS) text = '';
        rearm();
      }
    } catch {
      // Aborted (stopped, or quiet) or the connection dropped: the holder opens it again.
    } finally {
      clearTimeout(watchdog);
      await reader.cancel().catch(() => {});
    }
  };
}

/**
 * A stream held by the browser's EventSource, which re-opens a dropped one by itself (after the
 * server's `retry`): it ends only when the browser gives up (CLOSED: an answer that is not a
 * stream) or the hold stops. Without EventSource it never opens (and is not tried again).
 */
export function eventSourcePresence(url = '/api/me/presence'): PresenceConnect {
  return ({ signal, opened }) =>
    new Promise<void>((resolve) => {
      if (signal.aborted) return resolve();
      if (typeof EventSource === 'undefined') return signal.addEventListener('abort', () => resolve(), { once: true });
      const source = new EventSource(url);
      const end = (): void => {
        source.close();
        signal.removeEventListener('abort', end);
        resolve();
      };
      source.onopen = opened;
      source.onerror = () => {
        if (source.readyState === EventSource.CLOSED) end();
      };
      signal.addEventListener('abort', end, { once: true });
    });
}
