/**
 * How the coordinator's two clients (the page, web/; the terminal client, cli/contributor; both
 * through client/api-client.ts) ride out a restart of the coordinator: which failures look like one, which
 * requests may be sent again when no answer came, and how long to keep trying. One module, run in a
 * browser and in Node (no Node built-ins), so the two clients cannot drift apart.
 *
 * A restart looks like a request that got no answer from the coordinator: the connection refused,
 * reset or timed out, or a proxy's 502, 503 or 504 page (no `{error: {code}}` body). A 5xx that
 * carries one of the coordinator's own codes (`presence.streams_full`, `verification.unavailable`,
 * `auth.github_failed`) is an answer, never retried here.
 *
 * A request is sent again only when sending it twice does what sending it once does, for a request
 * whose first copy may have been carried out with its answer lost:
 *  - every GET and HEAD;
 *  - `POST /api/me/join` (a contributor already in line is kept in place, never queued twice),
 *    `POST /api/me/leave` (a second leave finds nothing more to leave) and `POST …/heartbeat`
 *    (it extends the same turn);
 *  - the sign-ins that only open a session, `POST /auth/demo` (a second one ends the oldest of the
 *    contributor's sessions), `POST /auth/github/device` (a new code, before anyone saw the first)
 *    and `POST /auth/semaphore/challenge` (an unused challenge expires), and `POST /auth/logout`.
 * Not `POST /auth/semaphore`: its proof spends its challenge, so a client redoes that sign-in from a
 * new challenge (cli/contributor/semaphore-sign-in.ts); only its refusal for load, which leaves the
 * challenge unspent, is answered by sending the same proof again (proof-resend.ts). Not the
 * console's changes (phase, removal, beacon, finalise): the operator repeats them. Uploads are tus's
 * own business: a dropped PATCH is resumed from the coordinator's offset (HEAD, then PATCH from it),
 * and a creation sent twice makes a second upload that replaces the first; both clients give tus
 * `restartRetryDelaysMs()`.
 */

/**
 * How long a client keeps sending a request again while the coordinator does not answer: a restart
 * takes seconds, a host's reboot a few minutes; a turn would be missed past this anyway.
 */
export const RESTART_RIDE_OUT_MS = 10 * 60_000;
/** The first pause, doubled after each failure up to the longest. */
const FIRST_PAUSE_MS = 500;
const LONGEST_PAUSE_MS = 30_000;
/** Each pause is drawn between 75 % and 125 % of its step: hundreds of clients do not come back at once. */
const JITTER = 0.25;

const SAFE_POSTS: readonly RegExp[] = [
  /^\/api\/me\/(join|leave)$/,
  /^\/api\/circuits\/[^/]+\/heartbeat$/,
  /^\/auth\/(demo|logout|github\/device|semaphore\/challenge)$/,
];

/** Whether `method route` may be sent again when its answer was lost (see the module header). */
export function safeToResend(method: string, route: string): boolean {
  const verb = method.toUpperCase();
  if (verb === 'GET' || verb === 'HEAD') return true;
  const pathOnly = route.split(/[?#]/, 1)[0]!;
  return verb === 'POST' && SAFE_POSTS.some((pattern) => pattern.test(pathOnly));
}

/**
 * Whether a failed request's status and code look like the coordinator restarting: no answer at all
 * (status 0, the clients' `network` code), or a gateway's 502/503/504 that is not one of the
 * coordinator's own refusals (the clients give those the code `http.STATUS`).
 */
export function looksLikeRestart(status: number, code: string): boolean {
  if (status === 0 || code === 'network') return true;
  return (status === 502 || status === 503 || status === 504) && code === `http.${status}`;
}

/** The pauses between tries, without jitter, until RESTART_RIDE_OUT_MS is covered (tus's `retryDelays`). */
export function restartRetryDelaysMs(rideOutMs = RESTART_RIDE_OUT_MS): number[] {
  const delays = [0];
  let pause = FIRST_PAUSE_MS;
  for (let total = 0; total < rideOutMs; total += pause, pause = Math.min(pause * 2, LONGEST_PAUSE_MS))
    delays.push(pause);
  return delays;
}

/** One more try coming, as the client may tell its user. */
export interface RestartRetry {
  /** 1 for the first try sent again. */
  attempt: number;
  /** The pause before it. */
  inMs: number;
  /** Why the last try failed, in a few words (the connection's error, the gateway's status). */
  reason: string;
  /** Since the first failure. */
  troubledForMs: number;
}

export interface RideOutOptions {
  /** Undefined when `error` is an answer (thrown as it is); else why, in a few words. */
  restartReason(error: unknown): string | undefined;
  /** Stops the waiting (the pause ends, and the last error is thrown). */
  signal?: AbortSignal;
  /** Told before each pause. */
  onRetry?(retry: RestartRetry): void;
  /** Told once the request went through after failing (the coordinator answers again). */
  onRecovered?(troubledForMs: number): void;
  /** Default RESTART_RIDE_OUT_MS. */
  rideOutMs?: number;
  /** Tests: a clock and a draw other than the real ones. */
  now?: () => number;
  random?: () => number;
}

/** Waits `ms`, or less if `signal` aborts (never rejects). */
export function pause(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve();
    const done = (): void => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal?.addEventListener('abort', done, { once: true });
  });
}

/**
 * Sends `send()` until it settles with an answer: a failure `restartReason` names is tried again
 * after a growing pause (500 ms doubling to 30 s, with jitter), for at most `rideOutMs` since the
 * first failure, after which that failure is thrown. Only for requests safe to send again.
 */
export async function rideOutRestart<T>(send: () => Promise<T>, options: RideOutOptions): Promise<T> {
  const now = options.now ?? Date.now;
  const random = options.random ?? Math.random;
  const rideOutMs = options.rideOutMs ?? RESTART_RIDE_OUT_MS;
  let troubledSince: number | undefined;
  let step = FIRST_PAUSE_MS;
  for (let attempt = 1; ; attempt++) {
    try {
      const answer = await send();
      if (troubledSince !== undefined) options.onRecovered?.(now() - troubledSince);
      return answer;
    } catch (error) {
      const reason = options.restartReason(error);
      if (reason === undefined || options.signal?.aborted) throw error;
      troubledSince ??= now();
      const troubledForMs = now() - troubledSince;
      if (troubledForMs >= rideOutMs) throw error;
      const inMs = Math.min(Math.round(step * (1 - JITTER + 2 * JITTER * random())), rideOutMs - troubledForMs);
      options.onRetry?.({ attempt, inMs, reason, troubledForMs });
      await pause(inMs, options.signal);
      if (options.signal?.aborted) throw error;
      step = Math.min(step * 2, LONGEST_PAUSE_MS);
    }
  }
}
