/**
 * `GET /api/me/presence`: a contributor's client (the page, `ceremony contribute`) holds this
 * server-sent-events stream open while it is in the ceremony. While it is open they are seen;
 * when it closes (a closed tab, a killed terminal, a reload not re-opened) the lobby counts them
 * gone after its grace unless they are seen again, so a circuit does not wait PRESENCE_MS,
 * TAKE_TURN_MS or TURN_SILENCE_MS to learn that nobody is there.
 *
 * Each stream costs the coordinator a socket: streams are capped per contributor (several pages
 * are fine, a loop opening hundreds is not) and in all (by default half the connections the
 * process's descriptors allow, server/http/descriptor-budget.ts). Past the overall cap a client
 * keeps its place by polling, as it always could; the stream only tells sooner that it left.
 */
import type { Request, RequestHandler, Response } from 'express';
import { CoordinatorError } from '../../core/errors.ts';

export interface PresenceStreamLimits {
  /** Streams open at once, all contributors together; beyond: 503 presence.streams_full. */
  maxStreams: number;
  /** Streams open at once by one contributor; beyond: 429 presence.too_many_streams. */
  maxPerContributor: number;
}

export const PRESENCE_STREAMS_PER_CONTRIBUTOR = 3;
/** How long a client waits before opening a dropped stream again (the SSE `retry` field). */
const RETRY_MS = 2000;
const KEEP_ALIVE_MAX_MS = 15_000;
const KEEP_ALIVE_MIN_MS = 1000;

/**
 * How often the server writes to every open stream: often enough that an idle proxy keeps it open
 * and the client sees a dead link within a few beats, and several times within the presence
 * period, since each beat is also when the contributor counts as seen.
 */
export function keepAliveMs(presenceMs: number): number {
  if (presenceMs <= 0) return KEEP_ALIVE_MAX_MS;
  return Math.min(KEEP_ALIVE_MAX_MS, Math.max(KEEP_ALIVE_MIN_MS, Math.floor(presenceMs / 4)));
}

interface PresenceLobby {
  seen(contributorId: string): boolean;
  streamClosed(contributorId: string): void;
}

export class PresenceStreams {
  private readonly open = new Map<Response, string>();
  private readonly perContributor = new Map<string, number>();
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly lobby: PresenceLobby,
    private readonly service: { tick(): void; dueChanged(): void },
    private readonly limits: PresenceStreamLimits,
    private readonly everyMs: number,
  ) {}

  /** Streams open now (for metrics and tests). */
  get size(): number {
    return this.open.size;
  }

  /** The route's handler; `contributorOf` reads the signed-in contributor (the router's guard ran). */
  handler(contributorOf: (req: Request) => string): RequestHandler {
    return (req, res) => {
      const who = contributorOf(req);
      const held = this.perContributor.get(who) ?? 0;
      if (held >= this.limits.maxPerContributor)
        throw new CoordinatorError(
          'presence.too_many_streams',
          `at most ${this.limits.maxPerContributor} presence streams per contributor are open at once`,
        );
      if (this.open.size >= this.limits.maxStreams)
        throw new CoordinatorError('presence.streams_full', 'the coordinator holds all the presence streams it takes');
      // Before anything is written or held: a failure here is answered as any route's error.
      if (this.lobby.seen(who)) this.service.tick();
      this.open.set(res, who);
      this.perContributor.set(who, held + 1);
      res.on('close', () => this.closed(res, who));
      res.writeHead(200, {
        'Content-Type': 'text/event-stream; charset=utf-8',
        'Cache-Control': 'no-store',
        // A buffering reverse proxy would hold the keep-alives back and cut the stream as idle.
        'X-Accel-Buffering': 'no',
      });
      res.write(`retry: ${RETRY_MS}\nevent: hello\ndata: ${JSON.stringify({ keepAliveMs: this.everyMs })}\n\n`);
      this.timer ??= setInterval(() => this.keepAlive(), this.everyMs).unref();
    };
  }

  private keepAlive(): void {
    // A timer has no caller to hand an error to: a failing lobby (its database busy or closing)
    // skips this beat's sightings, which the next beat or poll makes up, rather than crash the server.
    try {
      let back = false;
      for (const [res, who] of this.open) {
        res.write(': keep-alive\n\n');
        back = this.lobby.seen(who) || back;
      }
      if (back) this.service.tick();
    } catch {
      // See above.
    }
  }

  private closed(res: Response, who: string): void {
    if (!this.open.delete(res)) return;
    const left = (this.perContributor.get(who) ?? 1) - 1;
    if (left > 0) this.perContributor.set(who, left);
    else {
      this.perContributor.delete(who);
      this.lobby.streamClosed(who);
      // A turn they hold ends when the grace runs out, not at the interval's next tick after it. A
      // failing lobby (see keepAlive) leaves that to the interval rather than crash the server.
      try {
        this.service.dueChanged();
      } catch {
        // See above.
      }
    }
    if (this.open.size === 0 && this.timer) {
      clearInterval(this.timer);
      this.timer = undefined;
    }
  }
}
