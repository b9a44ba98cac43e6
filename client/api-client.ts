/**
 * The one HTTP client of the coordinator's two front ends, the page and the terminal client
 * (`ceremony contribute --coordinator`): fetch with the session, the CSRF token on every change, JSON
 * in and out, and every refusal turned into an ApiError carrying the server's stable code (a
 * connection that fails is the code `network`, status 0). A request safe to send again is sent again
 * while the coordinator does not answer (restart-retry.ts: which requests, and why).
 *
 * The page leaves the session to the browser (same origin, its cookie) and redirects to fetch; the
 * terminal client (`cookies`) keeps the session cookie from each answer itself and follows redirects
 * by hand, on its coordinator only, so that a sign-in's answer keeps its cookie and no redirect
 * carries it anywhere else. A terminal's lines name the request a refusal answered (`nameRequests`).
 */
import type { SessionView } from '../core/coordinator-api/api-types.ts';
import { looksLikeRestart, rideOutRestart, safeToResend, type RestartRetry } from './restart-retry.ts';

/** A refusal by the coordinator (`{error: {code, message}}` and its status), or `network` (status 0). */
export class ApiError extends Error {
  override readonly name = 'ApiError';

  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    /** From `Retry-After` (seconds), when the coordinator sent one: rate limits, a refused proof's resend. */
    readonly retryAfterSeconds?: number,
  ) {
    super(message);
  }
}

/**
 * The `{error: {code, message}}` body of a refusal, or a generic one for anything else (a proxy's
 * page). `what`, when given, names the request at the head of the message.
 */
export function apiErrorFromBody(status: number, text: string, retryAfter?: string | null, what?: string): ApiError {
  const seconds = Number(retryAfter ?? undefined);
  const retryAfterSeconds = Number.isFinite(seconds) && seconds > 0 ? seconds : undefined;
  try {
    const body = JSON.parse(text) as { error?: { code?: unknown; message?: unknown } };
    if (typeof body.error?.code === 'string') {
      const message = String(body.error.message ?? '');
      return new ApiError(status, body.error.code, what ? `${what}: ${message}` : message, retryAfterSeconds);
    }
  } catch {
    // not JSON: a proxy's page, say
  }
  const code = status === 0 ? 'network' : `http.${status}`;
  const message = what
    ? `${what}: HTTP ${status} ${text.slice(0, 200)}`.trim()
    : text.slice(0, 200) || `HTTP ${status}`;
  return new ApiError(status, code, message, retryAfterSeconds);
}

/** What every sign-in answers (server/auth/start-session.ts SignedInBody). */
export interface SignedIn {
  principal: { id: string; kind: string; displayName: string; coordinator: boolean };
  csrfToken: string;
  expiresAt: string;
}

/** What a client riding out restarts tells its user: the first try sent again, and the coordinator back. */
export interface RestartNotices {
  onRetry?(retry: RestartRetry): void;
  onRecovered?(troubledForMs: number): void;
}

export interface ApiClientOptions {
  /** The coordinator's URL; '' (the default): the page's own origin. */
  baseUrl?: string;
  /** Outside a browser: keep the session cookie from the answers and follow redirects by hand. */
  cookies?: boolean;
  /** How long a JSON request may take (default: unbounded). */
  requestTimeoutMs?: number;
  /** Send a request safe to send again while the coordinator does not answer (default: yes, silently; false: never). */
  rideOutRestarts?: RestartNotices | false;
  /** Begin a refusal's message with its request (`POST /api/me/join: …`). */
  nameRequests?: boolean;
}

export interface RequestOptions {
  signal?: AbortSignal;
  /** How the browser's cache takes part (the page only; default `no-store`); `no-cache` revalidates by ETag. */
  cache?: RequestCache;
  /**
   * Send again while the coordinator does not answer (default: when safeToResend); a caller whose
   * own loop tries again (the contributor's polls, the presence stream) passes false.
   */
  resend?: boolean;
  /** false: a redirect is the answer (a moving URL asked only to be heard), not followed; default true. */
  follow?: boolean;
}

const SESSION_COOKIE = 'ceremony_session';
/** Redirects followed on the coordinator's own origin (a moving URL to its version is one). */
const MAX_REDIRECTS = 3;

export class ApiClient {
  /** `ceremony_session=…`, as the last sign-in set it ('' before; the page leaves it to the browser). */
  cookie = '';
  /** Sent as X-CSRF-Token on every change; set by each sign-in ('' before). */
  csrfToken = '';
  readonly baseUrl: string;
  private readonly cookies: boolean;
  private readonly requestTimeoutMs: number;
  private readonly restarts: RestartNotices | undefined;
  private readonly nameRequests: boolean;

  constructor(options: ApiClientOptions = {}) {
    this.baseUrl = (options.baseUrl ?? '').replace(/\/+$/, '');
    this.cookies = options.cookies ?? false;
    this.requestTimeoutMs = options.requestTimeoutMs ?? Infinity;
    this.restarts = options.rideOutRestarts === false ? undefined : (options.rideOutRestarts ?? {});
    this.nameRequests = options.nameRequests ?? false;
  }

  /** The headers that carry the session (cookie, CSRF token), for requests made elsewhere (tus). */
  sessionHeaders(method = 'POST'): Record<string, string> {
    // The page sends its token only with a change; the terminal client with every request.
    const csrf = this.csrfToken && (this.cookies || method !== 'GET');
    return {
      ...(this.cookie ? { cookie: this.cookie } : {}),
      ...(csrf ? { 'x-csrf-token': this.csrfToken } : {}),
    };
  }

  /**
   * A request to the coordinator with the session; resolves with the raw response when it is a
   * success (2xx), else rejects with its refusal. The caller reads (or cancels) the body: a broken
   * download is the caller's to take again, never sent again here.
   */
  fetch(method: string, route: string, init: RequestOptions & { body?: unknown; timeoutMs?: number } = {}) {
    return this.resending(method, route, init, () => this.fetchOnce(method, route, init));
  }

  /** A JSON request; resolves with the parsed answer (read whole before it counts as answered). */
  request<T>(method: string, route: string, body?: unknown, options: RequestOptions = {}): Promise<T> {
    return this.resending(method, route, options, async () => {
      const response = await this.fetchOnce(method, route, { ...options, body });
      let text: string;
      try {
        text = await response.text();
      } catch (error) {
        // An answer cut off (by a restart, say) is no answer.
        if (options.signal?.aborted) throw error;
        const reason = (error as Error).message;
        throw new ApiError(
          0,
          'network',
          this.nameRequests ? `${method} ${route}: the answer broke off (${reason})` : reason,
        );
      }
      return (text ? JSON.parse(text) : undefined) as T;
    });
  }

  get<T>(route: string, options?: RequestOptions): Promise<T> {
    return this.request<T>('GET', route, undefined, options);
  }

  post<T>(route: string, body?: unknown): Promise<T> {
    return this.request<T>('POST', route, body ?? {});
  }

  /** Who this browser is signed in as (null if nobody), keeping the CSRF token for later changes. */
  async loadSession(): Promise<SessionView> {
    const session = await this.get<SessionView>('/auth/session');
    this.csrfToken = session.csrfToken ?? '';
    return session;
  }

  /** Posts a sign-in to `route` and keeps the new session's CSRF token for later changes. */
  async signIn<T extends { csrfToken?: string } = SessionView>(route: string, body: unknown): Promise<T> {
    const session = await this.post<T>(route, body);
    this.csrfToken = session.csrfToken ?? '';
    return session;
  }

  /** Keeps the CSRF token of a sign-in's answer (the cookie came with its headers). */
  signedIn(answer: SignedIn): SignedIn {
    this.csrfToken = answer.csrfToken;
    return answer;
  }

  async signOut(): Promise<void> {
    await this.request('POST', '/auth/logout');
    this.csrfToken = '';
  }

  /** `send` once, or again while the coordinator does not answer, when the request is safe to send again. */
  private resending<T>(method: string, route: string, init: RequestOptions, send: () => Promise<T>): Promise<T> {
    if (!this.restarts || !(init.resend ?? safeToResend(method, route))) return send();
    return rideOutRestart(send, {
      restartReason: (error) =>
        error instanceof ApiError && looksLikeRestart(error.status, error.code) ? error.message : undefined,
      signal: init.signal,
      onRetry: this.restarts.onRetry,
      onRecovered: this.restarts.onRecovered,
    });
  }

  private async fetchOnce(
    method: string,
    route: string,
    init: RequestOptions & { body?: unknown; timeoutMs?: number },
  ): Promise<Response> {
    const headers = this.sessionHeaders(method);
    const follow = init.follow ?? true;
    if (init.body !== undefined) headers['content-type'] = 'application/json';
    const timeoutMs = init.timeoutMs ?? this.requestTimeoutMs;
    const timeout = timeoutMs === Infinity ? undefined : AbortSignal.timeout(timeoutMs);
    const signal = timeout && init.signal ? AbortSignal.any([timeout, init.signal]) : (timeout ?? init.signal);
    const request: RequestInit = {
      method,
      headers,
      body: init.body === undefined ? undefined : JSON.stringify(init.body),
      signal,
      ...(this.cookies ? { redirect: 'manual' } : { credentials: 'same-origin', cache: init.cache ?? 'no-store' }),
      ...(follow ? {} : { redirect: 'manual' }),
    };
    let response: Response;
    try {
      response =
        this.cookies && follow
          ? await this.followOwnRedirects(method, route, request)
          : await fetch(`${this.baseUrl}${route}`, request);
    } catch (error) {
      if (init.signal?.aborted) throw error;
      if (!this.nameRequests) throw new ApiError(0, 'network', (error as Error).message);
      const cause = (error as { cause?: { code?: string; message?: string } }).cause;
      const reason = cause?.code ?? cause?.message ?? (error as Error).message;
      throw new ApiError(0, 'network', `${method} ${route}: ${reason}`);
    }
    if (response.ok) return response;
    // Not followed: the redirect is the answer (a page's is opaque to it).
    if (!follow && (response.type === 'opaqueredirect' || (response.status >= 300 && response.status < 400)))
      return response;
    const text = await response.text().catch(() => '');
    const what = this.nameRequests ? `${method} ${route}` : undefined;
    throw apiErrorFromBody(response.status, text, response.headers.get('retry-after'), what);
  }

  /**
   * fetch, following redirects on this coordinator only (a moving URL such as the head's inputs
   * answers with the URL of its version): fetch's own would follow one to anywhere, and a sign-in's
   * answer must keep its cookie.
   */
  private async followOwnRedirects(method: string, route: string, request: RequestInit): Promise<Response> {
    let url = `${this.baseUrl}${route}`;
    for (let hops = 0; ; hops++) {
      const response = await fetch(url, request);
      this.keepSession(response);
      const location = response.headers.get('location');
      const next = location ? new URL(location, url) : undefined;
      const follow =
        (method === 'GET' || method === 'HEAD') &&
        [301, 302, 303, 307, 308].includes(response.status) &&
        next?.origin === new URL(this.baseUrl).origin &&
        hops < MAX_REDIRECTS;
      if (!follow) return response;
      await response.body?.cancel();
      url = next.href;
    }
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
