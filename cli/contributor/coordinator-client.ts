/**
 * A contributor's HTTP connection to a coordinator, outside a browser: the session cookie kept
 * from the sign-in's answer, the CSRF token sent on every change, JSON in and out, and every
 * refusal turned into a CoordinatorApiError carrying the server's stable code (a connection that
 * fails is the code `network`). The terminal client (`ceremony contribute --coordinator`) and the
 * tests' contributor client both talk to the coordinator through it. Made with `rideOutRestarts`
 * (the terminal client), a request safe to send again is sent again while the coordinator does
 * not answer, for a few minutes (client/restart-retry.ts: which requests, and why).
 */
import { looksLikeRestart, rideOutRestart, safeToResend, type RestartRetry } from '../../client/restart-retry.ts';

/** A refusal by the coordinator (`{error: {code, message}}` and its status), or `network` (status 0). */
export class CoordinatorApiError extends Error {
  override readonly name = 'CoordinatorApiError';

  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    /** From `Retry-After`, when the coordinator sent one (rate limits, the device flow's pace). */
    readonly retryAfterSeconds?: number,
  ) {
    super(message);
  }
}

/** What every sign-in answers (server/auth/start-session.ts SignedInBody). */
export interface SignedIn {
  principal: { id: string; kind: string; displayName: string; coordinator: boolean };
  csrfToken: string;
  expiresAt: string;
}

const SESSION_COOKIE = 'ceremony_session';
/** Redirects followed on the coordinator's own origin (a moving URL to its version is one). */
const MAX_REDIRECTS = 3;
/** Every JSON request is bounded by default; downloads and uploads have their own pace. */
const REQUEST_TIMEOUT_MS = 30_000;

/** The refusal in a response (its `{error}` body when it has one). */
async function apiErrorOf(response: Response, what: string): Promise<CoordinatorApiError> {
  const text = await response.text().catch(() => '');
  const retryAfter = Number(response.headers.get('retry-after'));
  const retryAfterSeconds = Number.isFinite(retryAfter) && retryAfter > 0 ? retryAfter : undefined;
  try {
    const body = JSON.parse(text) as { error?: { code?: unknown; message?: unknown } };
    if (typeof body.error?.code === 'string') {
      return new CoordinatorApiError(
        response.status,
        body.error.code,
        `${what}: ${String(body.error.message ?? '')}`,
        retryAfterSeconds,
      );
    }
  } catch {
    // not JSON: a proxy's page, say
  }
  return new CoordinatorApiError(
    response.status,
    `http.${response.status}`,
    `${what}: HTTP ${response.status} ${text.slice(0, 200)}`.trim(),
    retryAfterSeconds,
  );
}

/** What a client riding out restarts tells its user: the first try sent again, and the coordinator back. */
export interface RestartNotices {
  onRetry?(retry: RestartRetry): void;
  onRecovered?(troubledForMs: number): void;
}

export class CoordinatorClient {
  /** `ceremony_session=…`, as the last sign-in set it ('' before). */
  cookie = '';
  /** Sent as X-CSRF-Token on every change; set by each sign-in. */
  csrfToken = '';
  readonly baseUrl: string;
  private readonly requestTimeoutMs: number;
  private readonly restarts: RestartNotices | undefined;

  /**
   * `requestTimeoutMs`: how long a JSON request may take (default 30 s; Infinity: unbounded, e.g. for
   * finalise). `rideOutRestarts`: send a request safe to send again while the coordinator does not
   * answer (off by default: a test that expects a failure gets it at once).
   */
  constructor(baseUrl: string, options: { requestTimeoutMs?: number; rideOutRestarts?: RestartNotices } = {}) {
    this.baseUrl = baseUrl.replace(/\/+$/, '');
    this.requestTimeoutMs = options.requestTimeoutMs ?? REQUEST_TIMEOUT_MS;
    this.restarts = options.rideOutRestarts;
  }

  /** The headers that carry the session (cookie, CSRF token), for requests made elsewhere (tus). */
  sessionHeaders(): Record<string, string> {
    return {
      ...(this.cookie ? { cookie: this.cookie } : {}),
      ...(this.csrfToken ? { 'x-csrf-token': this.csrfToken } : {}),
    };
  }

  /**
   * A request to the coordinator with the session; resolves with the raw response when it is a
   * success (2xx), else rejects with its refusal. The caller reads (or cancels) the body. With
   * `rideOutRestarts`, a request safe to send again (`resend`, by default safeToResend) is sent
   * again while the coordinator does not answer; the body it answers is not (a broken download is
   * the caller's to take again).
   */
  fetch(
    method: string,
    route: string,
    init: { body?: unknown; signal?: AbortSignal; timeoutMs?: number; resend?: boolean } = {},
  ): Promise<Response> {
    return this.resending(method, route, init, () => this.fetchOnce(method, route, init));
  }

  /**
   * `send` once, or again while the coordinator does not answer, when this client rides out restarts
   * and the request is safe to send again.
   */
  private resending<T>(
    method: string,
    route: string,
    init: { signal?: AbortSignal; resend?: boolean },
    send: () => Promise<T>,
  ): Promise<T> {
    if (!this.restarts || !(init.resend ?? safeToResend(method, route))) return send();
    return rideOutRestart(send, {
      restartReason: (error) =>
        error instanceof CoordinatorApiError && looksLikeRestart(error.status, error.code) ? error.message : undefined,
      signal: init.signal,
      onRetry: this.restarts.onRetry,
      onRecovered: this.restarts.onRecovered,
    });
  }

  private async fetchOnce(
    method: string,
    route: string,
    init: { body?: unknown; signal?: AbortSignal; timeoutMs?: number },
  ): Promise<Response> {
    const headers: Record<string, string> = { ...this.sessionHeaders() };
    if (init.body !== undefined) headers['content-type'] = 'application/json';
    const timeoutMs = init.timeoutMs ?? this.requestTimeoutMs;
    const timeout = timeoutMs === Infinity ? undefined : AbortSignal.timeout(timeoutMs);
    const signal = timeout && init.signal ? AbortSignal.any([timeout, init.signal]) : (timeout ?? init.signal);
    let response: Response;
    let url = `${this.baseUrl}${route}`;
    try {
      // Redirects are followed by hand, on this coordinator only (a moving URL such as the head's
      // inputs answers with the URL of its version): fetch's own would drop nothing, but would
      // follow one to anywhere, and a sign-in's answer must keep its cookie.
      for (let hops = 0; ; hops++) {
        response = await fetch(url, {
          method,
          headers,
          body: init.body === undefined ? undefined : JSON.stringify(init.body),
          signal,
          redirect: 'manual',
        });
        const location = response.headers.get('location');
        const next = location ? new URL(location, url) : undefined;
        const follow =
          (method === 'GET' || method === 'HEAD') &&
          [301, 302, 303, 307, 308].includes(response.status) &&
          next?.origin === new URL(this.baseUrl).origin &&
          hops < MAX_REDIRECTS;
        if (!follow) break;
        this.keepSession(response);
        await response.body?.cancel();
        url = next.href;
      }
    } catch (error) {
      if (init.signal?.aborted) throw error;
      const cause = (error as { cause?: { code?: string; message?: string } }).cause;
      throw new CoordinatorApiError(
        0,
        'network',
        `${method} ${route}: ${cause?.code ?? cause?.message ?? (error as Error).message}`,
      );
    }
    this.keepSession(response);
    if (response.status < 200 || response.status >= 300) throw await apiErrorOf(response, `${method} ${route}`);
    return response;
  }

  /** A JSON request; resolves with the parsed answer (read whole before it counts as answered). */
  request<T>(method: string, route: string, body?: unknown, options: { signal?: AbortSignal } = {}): Promise<T> {
    return this.resending(method, route, options, async () => {
      const response = await this.fetchOnce(method, route, { body, signal: options.signal });
      let text: string;
      try {
        text = await response.text();
      } catch (error) {
        if (options.signal?.aborted) throw error;
        throw new CoordinatorApiError(
          0,
          'network',
          `${method} ${route}: the answer broke off (${(error as Error).message})`,
        );
      }
      return (text ? JSON.parse(text) : undefined) as T;
    });
  }

  /** Demo sign-in (test networks, loopback only): contributor `demo:<name>`. */
  async signInDemo(name: string): Promise<SignedIn> {
    return this.signedIn(await this.request<SignedIn>('POST', '/auth/demo', { name }));
  }

  /** Keeps the CSRF token of a sign-in's answer (the cookie came with its headers). */
  signedIn(answer: SignedIn): SignedIn {
    this.csrfToken = answer.csrfToken;
    return answer;
  }

  private keepSession(response: Response): void {
    for (const line of response.headers.getSetCookie()) {
      const pair = line.split(';')[0]!;
      const eq = pair.indexOf('=');
      if (eq < 0 || pair.slice(0, eq).trim() !== SESSION_COOKIE) continue;
      const value = pair.slice(eq + 1).trim();
      this.cookie = value === '' ? '' : `${SESSION_COOKIE}=${value}`;
    }
  }
}
