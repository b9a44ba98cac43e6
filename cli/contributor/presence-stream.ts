/**
 * The terminal client's hold on the coordinator's presence stream (`GET /api/me/presence`, server-
 * sent events): open while the run lasts, so that when the command stops (Ctrl-C, a kill, a closed
 * laptop's dropped link) the coordinator learns it at once and passes this contributor over,
 * their place kept, instead of waiting for the polls to stop and a turn to go untaken.
 *
 * A stream that ends or falls quiet (no keep-alive for three beats) is opened again after a short
 * pause; one the coordinator refuses (too many streams, all taken, a coordinator without the route)
 * is tried again a minute later; a coordinator restarting (no answer, a proxy's 502) after the short
 * pause, as this loop is its own retry. Polls keep the place meanwhile, as they always did.
 */
import { looksLikeRestart } from '../../client/restart-retry.ts';
import { ApiError } from '../../client/api-client.ts';
import { type CoordinatorClient } from './coordinator-client.ts';

const REOPEN_AFTER_MS = 2000;
const REOPEN_AFTER_REFUSAL_MS = 60_000;
/** Until the stream's first event says the server's pace. */
const DEFAULT_KEEP_ALIVE_MS = 15_000;
const QUIET_BEATS = 3;
const MAX_PENDING_CHARS = 64 * 1024;

export class PresenceHold {
  private readonly stopping = new AbortController();
  private readonly done: Promise<void>;

  constructor(private readonly client: CoordinatorClient) {
    this.done = this.hold();
  }

  /** Closes the stream (the coordinator then counts the contributor gone after its grace). */
  async stop(): Promise<void> {
    this.stopping.abort();
    await this.done;
  }

  private async hold(): Promise<void> {
    const stop = this.stopping.signal;
    while (!stop.aborted) {
      let pause = REOPEN_AFTER_MS;
      try {
        await this.readOnce(stop);
      } catch (error) {
        if (error instanceof ApiError && !looksLikeRestart(error.status, error.code)) pause = REOPEN_AFTER_REFUSAL_MS;
      }
      // Stopped while reading: an abort listener added now would never fire, and stop() would wait
      // out the whole pause (2 s at the end of every run, before its last line).
      if (stop.aborted) return;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, pause);
        stop.addEventListener('abort', () => (clearTimeout(timer), resolve()), { once: true });
      });
    }
  }

  /** One stream, read until it ends, falls quiet or the hold stops. */
  private async readOnce(stop: AbortSignal): Promise<void> {
    const quiet = new AbortController();
    const signal = AbortSignal.any([stop, quiet.signal]);
    const response = await this.client.fetch('GET', '/api/me/presence', { signal, timeoutMs: Infinity, resend: false });
    const reader = response.body!.getReader();
    const decoder = new TextDecoder();
    let keepAliveMs = DEFAULT_KEEP_ALIVE_MS;
    let watchdog: NodeJS.Timeout | undefined;
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
      // Aborted (stopped, or quiet) or the connection dropped: the caller opens it again.
    } finally {
      clearTimeout(watchdog);
      await reader.cancel().catch(() => {});
    }
  }
}
