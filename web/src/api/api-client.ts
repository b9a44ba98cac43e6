/**
 * The browser's one way to talk to the coordinator: same-origin fetch with the session cookie,
 * the CSRF token on every state change, JSON in and out, and refusals turned into ApiError with
 * the server's stable code (see error-messages.ts for what each means in plain words). A request safe
 * to send again is sent again while the coordinator does not answer (a restart), for up to 10 minutes
 * (client/restart-retry.ts, shared with the terminal client).
 */
import type { SessionView } from './api-types.ts';
import { looksLikeRestart, rideOutRestart, safeToResend } from '../../../client/restart-retry.ts';

export class ApiError extends Error {
  override readonly name = 'ApiError';

  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    /** From `Retry-After` (seconds), when the coordinator sent one: a refused proof's resend waits it. */
    readonly retryAfterSeconds?: number,
  ) {
    super(message);
  }
}

/** The `{error: {code, message}}` body of a refusal, or a generic one for anything else. */
export function apiErrorFromBody(status: number, text: string, retryAfter?: string | null): ApiError {
  const seconds = Number(retryAfter ?? undefined);
  const retryAfterSeconds = Number.isFinite(seconds) && seconds > 0 ? seconds : undefined;
  try {
    const body = JSON.parse(text) as { error?: { code?: unknown; message?: unknown } };
    if (typeof body.error?.code === 'string')
      return new ApiError(status, body.error.code, String(body.error.message ?? ''), retryAfterSeconds);
  } catch {
    // not JSON: fall through
  }
  const fallback = text.slice(0, 200) || `HTTP ${status}`;
  return new ApiError(status, status === 0 ? 'network' : `http.${status}`, fallback, retryAfterSeconds);
}

export class ApiClient {
  /** Sent as X-CSRF-Token on every state change; set by sign-in or loadSession(). */
  csrfToken: string | undefined;

  /**
   * `cache`: how the browser's cache takes part; `no-cache` revalidates a kept answer by its ETag.
   * `resend`: send again while the coordinator does not answer (default: when safeToResend); a
   * caller whose own loop tries again (the contributor's polls) passes false to hear of it at once.
   */
  request<T>(
    method: string,
    route: string,
    body?: unknown,
    cache: RequestCache = 'no-store',
    resend = safeToResend(method, route),
  ): Promise<T> {
    const once = () => this.requestOnce<T>(method, route, body, cache);
    if (!resend) return once();
    return rideOutRestart(once, {
      restartReason: (error) =>
        error instanceof ApiError && looksLikeRestart(error.status, error.code) ? error.message : undefined,
    });
  }

  private async requestOnce<T>(method: string, route: string, body: unknown, cache: RequestCache): Promise<T> {
    const headers: Record<string, string> = {};
    if (body !== undefined) headers['content-type'] = 'application/json';
    if (method !== 'GET' && this.csrfToken) headers['x-csrf-token'] = this.csrfToken;
    let response: Response;
    let text: string;
    try {
      response = await fetch(route, {
        method,
        headers,
        body: body === undefined ? undefined : JSON.stringify(body),
        credentials: 'same-origin',
        cache,
      });
      // Inside: an answer cut off by a restart is no answer.
      text = await response.text();
    } catch (error) {
      throw new ApiError(0, 'network', (error as Error).message);
    }
    if (!response.ok) throw apiErrorFromBody(response.status, text, response.headers.get('retry-after'));
    return (text ? JSON.parse(text) : undefined) as T;
  }

  get<T>(route: string, cache?: RequestCache, resend?: boolean): Promise<T> {
    return this.request<T>('GET', route, undefined, cache, resend);
  }

  post<T>(route: string, body?: unknown): Promise<T> {
    return this.request<T>('POST', route, body ?? {});
  }

  /** Who this browser is signed in as (null if nobody), keeping the CSRF token for later changes. */
  async loadSession(): Promise<SessionView> {
    const session = await this.get<SessionView>('/auth/session');
    this.csrfToken = session.csrfToken;
    return session;
  }

  /** Posts a sign-in to `route` and keeps the new session's CSRF token for later changes. */
  async signIn(route: string, body: unknown): Promise<SessionView> {
    const session = await this.post<SessionView>(route, body);
    this.csrfToken = session.csrfToken;
    return session;
  }

  async signOut(): Promise<void> {
    await this.request('POST', '/auth/logout');
    this.csrfToken = undefined;
  }
}
