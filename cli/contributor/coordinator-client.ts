/**
 * A contributor's HTTP connection to a coordinator, outside a browser: the shared client
 * (client/api-client.ts) keeping the session cookie itself, every JSON request bounded, and each
 * refusal's message naming its request. The terminal client (`ceremony contribute --coordinator`)
 * and the tests' contributor client both talk to the coordinator through it. Made with
 * `rideOutRestarts` (the terminal client), a request safe to send again is sent again while the
 * coordinator does not answer, for a few minutes (client/restart-retry.ts: which requests, and why).
 */
import { ApiClient, type RestartNotices, type SignedIn } from '../../client/api-client.ts';

/** Every JSON request is bounded by default; downloads and uploads have their own pace. */
const REQUEST_TIMEOUT_MS = 30_000;

export class CoordinatorClient extends ApiClient {
  /**
   * `requestTimeoutMs`: how long a JSON request may take (default 30 s; Infinity: unbounded, e.g. for
   * finalise). `rideOutRestarts`: send a request safe to send again while the coordinator does not
   * answer (off by default: a test that expects a failure gets it at once).
   */
  constructor(baseUrl: string, options: { requestTimeoutMs?: number; rideOutRestarts?: RestartNotices } = {}) {
    super({
      baseUrl,
      cookies: true,
      requestTimeoutMs: options.requestTimeoutMs ?? REQUEST_TIMEOUT_MS,
      rideOutRestarts: options.rideOutRestarts ?? false,
      nameRequests: true,
    });
  }

  /** Demo sign-in (test networks, loopback only): contributor `demo:<name>`. */
  async signInDemo(name: string): Promise<SignedIn> {
    return this.signedIn(await this.request<SignedIn>('POST', '/auth/demo', { name }));
  }
}
