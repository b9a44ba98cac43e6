/**
 * A contributor as the coordinator sees one over HTTP: signs in (demo sign-in on loopback),
 * joins, polls its status, downloads the head, contributes with snarkjs and uploads the result
 * with the real tus client, exactly as the browser does. The connection itself (session cookie,
 * CSRF token, refusals with their codes) is the product's (cli/contributor/coordinator-client.ts).
 *
 * Tests that speak the tus protocol request by request do it through this client only: the raw
 * `createUpload` (POST) and `patch` (PATCH) answer the coordinator's response as it is,
 * `tusHeaders()` carries the protocol's version and the session, and `refusal(response)` reads a
 * refusal's status, code and message. No test writes tus headers by hand.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import http from 'node:http';
import { rmSync } from 'node:fs';
import { mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import * as snarkjs from 'snarkjs';
import * as tus from 'tus-js-client';
import { ApiError } from '../../client/api-client.ts';
import { CoordinatorClient } from '../../cli/contributor/coordinator-client.ts';

/** A refusal by the coordinator: its status and code (the product's error class). */
export { ApiError as HttpError };

export interface CircuitProgressView {
  circuit: string;
  state: 'pending' | 'waiting' | 'turn' | 'verifying' | 'accepted';
  position?: number;
  etaMs?: number;
  deadline?: number;
  contributionHash?: string;
  index?: number;
}

export interface MeView {
  principal: { id: string; displayName: string };
  status: {
    circuits: CircuitProgressView[];
    done: boolean;
    lastRefusal?: { circuit: string; code: string; message: string };
    removed?: { circuit: string; reason: string; message: string };
  };
  contributions: Array<{
    id: string;
    circuit: string;
    status: string;
    code: string | null;
    message: string | null;
    contributionHash: string | null;
  }>;
}

/**
 * Every client's scratch folder, removed when the test process exits: a client has no end of life of
 * its own (tests drop them mid-flow), and each folder holds a head and its successor (megabytes).
 */
const scratchFolders = new Set<string>();
process.once('exit', () => {
  for (const folder of scratchFolders) rmSync(folder, { recursive: true, force: true });
});

async function makeScratchFolder(): Promise<string> {
  const folder = await mkdtemp(path.join(tmpdir(), 'contributor-'));
  scratchFolders.add(folder);
  return folder;
}

export class ContributorClient extends CoordinatorClient {
  /** Made on first use (makeContribution), so a client that only signs in and uploads leaves no folder behind. */
  private workDirMade: Promise<string> | undefined;
  private get workDir(): Promise<string> {
    return (this.workDirMade ??= makeScratchFolder());
  }

  constructor(baseUrl: string) {
    // Tests wait as long as the coordinator takes (finalise runs minutes on a busy machine).
    super(baseUrl, { requestTimeoutMs: Infinity });
  }

  async signInCoordinator(token: string): Promise<void> {
    const session = await this.request<{ csrfToken: string }>('POST', '/auth/coordinator', { token });
    this.csrfToken = session.csrfToken;
  }

  join(): Promise<MeView> {
    return this.request('POST', '/api/me/join');
  }

  me(): Promise<MeView> {
    return this.request('GET', '/api/me');
  }

  async progress(circuit: string): Promise<CircuitProgressView> {
    return (await this.me()).status.circuits.find((c) => c.circuit === circuit)!;
  }

  /** Polls until `predicate` holds for this contributor's status (fails after `timeoutMs`). */
  async waitFor(predicate: (me: MeView) => boolean, what: string, timeoutMs = 60_000): Promise<MeView> {
    const started = Date.now();
    for (;;) {
      const me = await this.me();
      if (predicate(me)) return me;
      if (Date.now() - started > timeoutMs)
        throw new Error(`timed out waiting for ${what}: ${JSON.stringify(me.status)}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }

  /** Polls until `circuit` is in `state` in this contributor's status (fails after `timeoutMs`, saying `what`). */
  waitForState(
    circuit: string,
    state: CircuitProgressView['state'],
    what: string,
    timeoutMs?: number,
  ): Promise<MeView> {
    return this.waitFor(
      (me) => me.status.circuits.find((c) => c.circuit === circuit)?.state === state,
      what,
      timeoutMs,
    );
  }

  async headIndex(circuit: string): Promise<number> {
    const ceremony = await this.request<{ circuits: Array<{ name: string; headIndex: number }> }>(
      'GET',
      '/api/ceremony',
    );
    return ceremony.circuits.find((c) => c.name === circuit)!.headIndex;
  }

  /**
   * GET /api/circuits/:circuit/contribution-inputs, saved to `file`: the head's inputs (its skeleton, on
   * a coordinator that takes deltas), with the head's index, the format and the size.
   */
  async downloadInputs(circuit: string, file: string): Promise<{ head: number; format: string | null; bytes: number }> {
    const response = await fetch(`${this.baseUrl}/api/circuits/${circuit}/contribution-inputs`);
    assert.equal(response.status, 200, `the inputs of ${circuit}`);
    const bytes = Buffer.from(await response.arrayBuffer());
    await writeFile(file, bytes);
    return {
      head: Number(response.headers.get('x-chain-head')),
      format: response.headers.get('x-contribution-format'),
      bytes: bytes.length,
    };
  }

  /**
   * Takes the turn as a client does, by starting the download of the head with the session (a
   * heartbeat does not take a turn); reads one byte of it.
   */
  async takeByDownload(circuit: string): Promise<void> {
    const index = await this.headIndex(circuit);
    const response = await fetch(`${this.baseUrl}/api/circuits/${circuit}/zkeys/${index}`, {
      headers: { ...this.sessionHeaders('GET'), range: 'bytes=0-0' },
    });
    if (!response.ok) throw new Error(`download failed: ${response.status}`);
    await response.arrayBuffer();
  }

  /** Downloads the current head of `circuit` and contributes to it with snarkjs; returns the file and its hash. */
  async makeContribution(circuit: string): Promise<{ file: string; contributionHash: string }> {
    const dir = await this.workDir;
    const index = await this.headIndex(circuit);
    const response = await fetch(`${this.baseUrl}/api/circuits/${circuit}/zkeys/${index}`);
    if (!response.ok) throw new Error(`download failed: ${response.status}`);
    const head = path.join(dir, `${circuit}_head.zkey`);
    await writeFile(head, Buffer.from(await response.arrayBuffer()));
    const file = path.join(dir, `${circuit}_next.zkey`);
    const hash = await snarkjs.zKey.contribute(
      head,
      file,
      this.cookie ? 'http-contributor' : 'anonymous',
      randomBytes(32).toString('hex'),
    );
    return { file, contributionHash: Buffer.from(hash).toString('hex') };
  }

  /** The headers of every tus request: the protocol's version and the session (cookie, CSRF token). */
  tusHeaders(): Record<string, string> {
    return { 'tus-resumable': '1.0.0', ...this.sessionHeaders() };
  }

  /**
   * A raw tus creation (POST) on `circuit`: `length` as Upload-Length (absent: none declared),
   * `metadata` as Upload-Metadata (a file name added), `headers` beyond the protocol's, and
   * `body` for a creation with upload. The coordinator's answer, whatever it is.
   */
  createUpload(
    circuit: string,
    options: {
      length?: number;
      metadata?: Record<string, string>;
      headers?: Record<string, string>;
      body?: Uint8Array<ArrayBuffer>;
    } = {},
  ): Promise<Response> {
    return fetch(`${this.baseUrl}/api/circuits/${circuit}/contributions`, {
      method: 'POST',
      headers: {
        ...this.creationHeaders(circuit, options),
        ...(options.body ? { 'content-type': 'application/offset+octet-stream' } : {}),
        ...options.headers,
      },
      body: options.body,
    });
  }

  /** The headers of a tus creation (createUpload's), for a test that sends it by other means. */
  creationHeaders(circuit: string, options: { length?: number; metadata?: Record<string, string> } = {}) {
    const encoded = Object.entries({ filename: `${circuit}.zkey`, ...options.metadata }).map(
      ([key, value]) => `${key} ${Buffer.from(value).toString('base64')}`,
    );
    return {
      ...this.tusHeaders(),
      ...(options.length === undefined ? {} : { 'upload-length': String(options.length) }),
      'upload-metadata': encoded.join(','),
    };
  }

  /** The headers of a tus PATCH at `offset` (patch's), for a test that sends it by other means. */
  patchHeaders(offset: number): Record<string, string> {
    return {
      ...this.tusHeaders(),
      'upload-offset': String(offset),
      'content-type': 'application/offset+octet-stream',
    };
  }

  /** The absolute URL of the upload a creation answered (its Location). */
  uploadUrl(created: Response): string {
    const location = created.headers.get('location');
    if (!location) throw new Error(`the creation answered ${created.status} without a Location`);
    return new URL(location, `${this.baseUrl}/api/`).href;
  }

  /**
   * A raw tus PATCH of `body` at `offset` to the upload at `url`; a stream body goes chunked (no
   * Content-Length), as a client that does not know its length sends it. The answer as it is.
   */
  patch(url: string, offset: number, body: BodyInit, headers: Record<string, string> = {}): Promise<Response> {
    return fetch(url, {
      method: 'PATCH',
      headers: { ...this.patchHeaders(offset), ...headers },
      body,
      duplex: 'half',
    } as RequestInit);
  }

  /** The refusal a response carries: its status, code and message, and the body as sent (to search for paths). */
  async refusal(response: Response): Promise<{ status: number; code: string; message: string; body: string }> {
    const body = await response.text();
    let error: { code?: string; message?: string } | undefined;
    try {
      error = (JSON.parse(body) as { error?: { code?: string; message?: string } }).error;
    } catch {
      // not JSON: reported below
    }
    if (!error?.code) throw new Error(`not a refusal: ${response.status} ${body.slice(0, 200)}`);
    return { status: response.status, code: error.code, message: error.message ?? '', body };
  }

  /**
   * One tus upload in two plain requests (creation, then the whole body in one PATCH), for tests
   * that look at each answer: the status and error code of the one that refused, or the
   * contribution's id. `metadata` is the upload's (e.g. a delta's format and head).
   */
  async sendUpload(
    circuit: string,
    bytes: Buffer,
    metadata: Record<string, string> = {},
  ): Promise<{ status: number; code?: string; message?: string; contributionId?: string }> {
    const answer = async (response: Response) => {
      if (response.ok)
        return { status: response.status, contributionId: response.headers.get('x-contribution-id') ?? undefined };
      const { status, code, message } = await this.refusal(response);
      return { status, code, message };
    };
    const created = await this.createUpload(circuit, { length: bytes.length, metadata });
    if (!created.ok) return answer(created);
    return answer(await this.patch(this.uploadUrl(created), 0, new Uint8Array(bytes)));
  }

  /**
   * A tus upload of `bytes` created and sent only up to byte `upTo` (one PATCH), as a client that
   * stops there; the upload's URL, for `upload(…, { uploadUrl })` to resume it.
   */
  async startUpload(circuit: string, bytes: Buffer, metadata: Record<string, string>, upTo: number): Promise<string> {
    const created = await this.createUpload(circuit, { length: bytes.length, metadata });
    if (!created.ok) throw new Error(`creation refused: ${created.status} ${await created.text()}`);
    const url = this.uploadUrl(created);
    const sent = await this.patch(url, 0, new Uint8Array(bytes.subarray(0, upTo)));
    if (sent.status !== 204) throw new Error(`the first bytes were refused: ${sent.status} ${await sent.text()}`);
    return url;
  }

  /**
   * Uploads with tus in PATCHes of `pieceBytes`; the PATCH that would cross byte `cutAt` is cut
   * there instead (its connection destroyed after `cutAt` bytes of the upload went out), and the
   * upload resumes from the offset the coordinator answers to HEAD, as a client whose link dropped.
   * Resolves with the last PATCH's answer and the offset the coordinator had after the cut.
   */
  async sendUploadInPieces(
    circuit: string,
    bytes: Buffer,
    metadata: Record<string, string>,
    options: { pieceBytes: number; cutAt?: number },
  ): Promise<{ status: number; code?: string; contributionId?: string; offsetAfterCut?: number }> {
    const created = await this.createUpload(circuit, { length: bytes.length, metadata });
    if (!created.ok) throw new Error(`creation refused: ${created.status} ${await created.text()}`);
    const url = this.uploadUrl(created);
    let offsetAfterCut: number | undefined;
    let cut = options.cutAt;
    for (let offset = 0; ;) {
      const end = Math.min(bytes.length, offset + options.pieceBytes);
      if (cut !== undefined && cut > offset && cut < end) {
        const headers = { ...this.patchHeaders(offset), 'content-length': String(end - offset) };
        await cutRequest(new URL(url), headers, bytes.subarray(offset, cut));
        cut = undefined;
        const head = await fetch(url, { method: 'HEAD', headers: this.tusHeaders() });
        offset = offsetAfterCut = Number(head.headers.get('upload-offset'));
        continue;
      }
      const sent = await this.patch(url, offset, new Uint8Array(bytes.subarray(offset, end)));
      if (!sent.ok || end === bytes.length) {
        const answer = sent.ok
          ? { status: sent.status, contributionId: sent.headers.get('x-contribution-id') ?? undefined }
          : { status: sent.status, code: (await this.refusal(sent)).code };
        return { ...answer, ...(offsetAfterCut === undefined ? {} : { offsetAfterCut }) };
      }
      offset = end;
    }
  }

  /** Uploads a file with tus (resumable). Rejects with the server's error body on refusal. */
  upload(
    circuit: string,
    file: string | Buffer,
    options: {
      chunkSize?: number;
      onUrl?: (url: string) => void;
      uploadUrl?: string;
      onChunkComplete?: (uploaded: number) => void;
      /** The upload's metadata beyond its file name (e.g. a delta's format and head). */
      metadata?: Record<string, string>;
    } = {},
  ): Promise<string> {
    return (async () => {
      const bytes = typeof file === 'string' ? await readFile(file) : file;
      return new Promise<string>((resolve, reject) => {
        const upload = new tus.Upload(bytes, {
          endpoint: `${this.baseUrl}/api/circuits/${circuit}/contributions`,
          uploadUrl: options.uploadUrl,
          headers: { cookie: this.cookie, 'x-csrf-token': this.csrfToken },
          chunkSize: options.chunkSize ?? Infinity,
          retryDelays: [],
          metadata: { filename: `${circuit}.zkey`, ...options.metadata },
          onUploadUrlAvailable: () => options.onUrl?.(upload.url!),
          onChunkComplete: (_size, uploaded) => options.onChunkComplete?.(uploaded),
          onError: (error) => reject(error),
          onSuccess: () => resolve(upload.url!),
        });
        upload.start();
      });
    })();
  }

  /**
   * A demo contributor of the coordinator at `url`, signed in as `name` and joined, who took a turn on
   * each of `circuits` (none: only joined).
   */
  static async contributed(url: string, name: string, ...circuits: string[]): Promise<ContributorClient> {
    const client = new ContributorClient(url);
    await client.signInDemo(name);
    await client.join();
    for (const circuit of circuits) await client.takeTurn(circuit);
    return client;
  }

  /**
   * A demo contributor signed in as `name` who joined, had the first turn on register and uploaded a
   * contribution to it, once the coordinator says it is being verified (with no worker running, its
   * job waits in Redis).
   */
  static async awaitingVerdict(url: string, name: string): Promise<ContributorClient> {
    const client = new ContributorClient(url);
    await client.signInDemo(name);
    await client.join();
    const { file } = await client.makeContribution('register');
    await client.upload('register', file);
    await client.waitFor((m) => m.status.circuits[0]!.state === 'verifying', 'verifying');
    return client;
  }

  /** Contributes to `circuit` when it is this contributor's turn, and waits for the verdict. */
  async takeTurn(circuit: string, timeoutMs = 120_000): Promise<MeView> {
    await this.waitForState(circuit, 'turn', `a turn on ${circuit}`, timeoutMs);
    const { file } = await this.makeContribution(circuit);
    await this.upload(circuit, file);
    return this.waitForState(circuit, 'accepted', `${circuit} accepted`, timeoutMs);
  }
}

/**
 * A PATCH whose body stops after `sent` of the bytes it declared: the socket is destroyed once they
 * are written and the coordinator had a moment to store them, as a connection that drops.
 */
async function cutRequest(url: URL, headers: Record<string, string>, sent: Buffer): Promise<void> {
  await new Promise<void>((resolve) => {
    const request = http.request(url, { method: 'PATCH', headers });
    request.on('error', () => resolve());
    request.on('response', () => resolve());
    request.write(sent, () => setTimeout(() => (request.destroy(), resolve()), 300));
  });
  // The coordinator sees the connection close and ends its write; give it time to do so.
  await new Promise((wait) => setTimeout(wait, 200));
}
