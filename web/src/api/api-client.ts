/**
 * The browser's one way to talk to the coordinator: same-origin fetch with the session cookie,
 * the CSRF token on every state change, JSON in and out, and refusals turned into ApiError with
 * the server's stable code (see error-messages.ts for what each means in plain words).
 */
import type { SessionView } from './api-types.ts';

export class ApiError extends Error {
  override readonly name = 'ApiError';

  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

/** The `{error: {code, message}}` body of a refusal, or a generic one for anything else. */
export function apiErrorFromBody(status: number, text: string): ApiError {
  try {
    const body = JSON.parse(text) as { error?: { code?: unknown; message?: unknown } };
    if (typeof body.error?.code === 'string')
      return new ApiError(status, body.error.code, String(body.error.message ?? ''));
  } catch {
    // not JSON: fall through
  }
  return new ApiError(status, status === 0 ? 'network' : `http.${status}`, text.slice(0, 200) || `HTTP ${status}`);
}

export class ApiClient {
  /** Sent as X-CSRF-Token on every state change; set by sign-in or loadSession(). */
  csrfToken: string | undefined;

  /** `cache`: how the browser's cache takes part; `no-cache` revalidates a kept answer by its ETag. */
  async request<T>(method: string, route: string, body?: unknown, cache: RequestCache = 'no-store'): Promise<T> {
    const headers: Record<string, string> = {};
    if (body !== undefined) headers['content-type'] = 'application/json';
    if (method !== 'GET' && this.csrfToken) headers['x-csrf-token'] = this.csrfToken;
    let response: Response;
    try {
      response = await fetch(route, {
        method,
        headers,
        body: body === undefined ? undefined : JSON.stringify(body),
        credentials: 'same-origin',
        cache,
      });
    } catch (error) {
      throw new ApiError(0, 'network', (error as Error).message);
    }
    const text = await response.text();
    if (!response.ok) throw apiErrorFromBody(response.status, text);
    return (text ? JSON.parse(text) : undefined) as T;
  }

  get<T>(route: string, cache?: RequestCache): Promise<T> {
    return this.request<T>('GET', route, undefined, cache);
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
