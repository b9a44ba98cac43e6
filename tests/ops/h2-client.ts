/**
 * HTTP/2 over TLS to the compose stack's proxy, trusting the test's own certificate authority: what
 * a browser speaks to the proxy, for the container test's checks of what the proxy passes on (the
 * presence stream, downloads and their headers, uploads) and for the console's steps (a
 * coordinator session: cookie and CSRF token).
 */
import { once } from 'node:events';
import { connect, type ClientHttp2Session, type ClientHttp2Stream, type IncomingHttpHeaders } from 'node:http2';

export interface H2Answer {
  status: number;
  headers: IncomingHttpHeaders;
  body: Buffer;
}

export class H2Client {
  private cookie = '';
  private csrfToken = '';

  private constructor(private readonly session: ClientHttp2Session) {}

  static async connect(origin: string, ca: string): Promise<H2Client> {
    const session = connect(origin, { ca });
    await Promise.race([
      once(session, 'connect'),
      once(session, 'error').then(([error]) => Promise.reject(error as Error)),
    ]);
    return new H2Client(session);
  }

  /** What TLS's ALPN chose: 'h2' when the proxy speaks HTTP/2. */
  get protocol(): string | false | undefined {
    return this.session.alpnProtocol;
  }

  private headersFor(method: string, path: string, extra: Record<string, string>): Record<string, string> {
    return {
      ':method': method,
      ':path': path,
      ...(this.cookie ? { cookie: this.cookie } : {}),
      ...(this.csrfToken && method !== 'GET' ? { 'x-csrf-token': this.csrfToken } : {}),
      ...extra,
    };
  }

  /** Opens a request and answers its stream once the response's headers are in (the body still to read). */
  async open(
    method: string,
    path: string,
    options: { headers?: Record<string, string>; body?: Buffer } = {},
  ): Promise<{ stream: ClientHttp2Stream; status: number; headers: IncomingHttpHeaders }> {
    const stream = this.session.request(this.headersFor(method, path, options.headers ?? {}));
    stream.end(options.body);
    const [headers] = (await Promise.race([
      once(stream, 'response'),
      once(stream, 'error').then(([error]) => Promise.reject(error as Error)),
    ])) as [IncomingHttpHeaders];
    return { stream, status: Number(headers[':status']), headers };
  }

  async request(
    method: string,
    path: string,
    options: { headers?: Record<string, string>; json?: unknown; body?: Buffer } = {},
  ): Promise<H2Answer> {
    const headers = { ...options.headers };
    let body = options.body;
    if (options.json !== undefined) {
      headers['content-type'] = 'application/json';
      body = Buffer.from(JSON.stringify(options.json));
    }
    const { stream, status, headers: answered } = await this.open(method, path, { headers, ...(body ? { body } : {}) });
    const chunks: Buffer[] = [];
    for await (const chunk of stream) chunks.push(chunk as Buffer);
    return { status, headers: answered, body: Buffer.concat(chunks) };
  }

  /** A JSON request that must succeed (2xx); answers the parsed body. */
  async json<T>(method: string, path: string, json?: unknown): Promise<T> {
    const answer = await this.request(method, path, json === undefined ? {} : { json });
    if (answer.status < 200 || answer.status >= 300)
      throw new Error(`${method} ${path}: ${answer.status} ${answer.body.toString().slice(0, 500)}`);
    return JSON.parse(answer.body.toString()) as T;
  }

  /** The console's sign-in (COORDINATOR_TOKEN): keeps the session cookie and the CSRF token. */
  async signInCoordinator(token: string): Promise<void> {
    const answer = await this.request('POST', '/auth/coordinator', { json: { token } });
    if (answer.status !== 200) throw new Error(`coordinator sign-in: ${answer.status} ${answer.body.toString()}`);
    const setCookie = [answer.headers['set-cookie'] ?? []].flat();
    this.cookie = setCookie.map((line) => line.split(';')[0]!).join('; ');
    this.csrfToken = (JSON.parse(answer.body.toString()) as { csrfToken: string }).csrfToken;
  }

  close(): void {
    this.session.close();
  }
}
