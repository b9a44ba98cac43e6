/**
 * GET /metrics over real HTTP on real coordinators: the figures move as contributions are refused
 * and accepted and as a turn is missed; answered on loopback without sign-in, refused (403
 * metrics.forbidden) to a request from another interface or forwarded by a proxy unless it
 * carries the METRICS_TOKEN bearer token; two coordinators in one process keep separate figures;
 * the bytes moved over HTTP, per route group, are exactly the bytes a client's sockets sent and
 * received for a zkey download and a tus upload.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { request as httpRequest, type IncomingHttpHeaders, type IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';
import { once } from 'node:events';
import { networkInterfaces } from 'node:os';
import { readFile, stat } from 'node:fs/promises';
import { copyCeremony, newCeremonyDir } from '../fixtures/ceremony-fixture.ts';
import { ContributorClient } from '../helpers/contributor-client.ts';
import { loadServerConfig } from '../../server/config/server-config.ts';
import type { RunningCoordinator } from '../../server/start-coordinator.ts';
import { editSections, sectionOf, sectionOffset, tamperedCopy } from '../helpers/zkey-tamper.ts';
import { startTestCoordinator } from '../helpers/test-coordinator.ts';
import { cleanUp } from '../helpers/clean-up.ts';
import { MIN_CONTRIBUTION_RECORD_BYTES, SECTION } from '../../core/zkey/zkey-file.ts';
import { ceremonyPaths } from '../../core/data-folder/ceremony-paths.ts';
import { HTTP_ROUTE_GROUPS, httpRouteGroup } from '../../server/metrics/http-byte-counter.ts';

const TOKEN = 'metrics-token-for-tests-0123456789';
const TURN_TIMEOUT_MS = 10 * 60_000;
let dataDir: string;
let otherDataDir: string;
let bytesDataDir: string;
let coordinator: RunningCoordinator;
let exposed: RunningCoordinator;
let offset = 0; // the first coordinator's clock runs `offset` ms ahead of real time
const clock = { now: () => Date.now() + offset };

interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

function parseMetrics(text: string): Sample[] {
  return text
    .split('\n')
    .filter((line) => line && !line.startsWith('#'))
    .map((line) => {
      const match = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
      assert.ok(match, `not a Prometheus sample line: ${line}`);
      const labels = Object.fromEntries(
        [...(match[2] ?? '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)].map((m) => [m[1]!, m[2]!]),
      );
      return { name: match[1]!, labels, value: Number(match[3]) };
    });
}

/** The value of the one sample of `name` whose labels include `labels`. */
function valueOf(samples: Sample[], name: string, labels: Record<string, string> = {}): number | undefined {
  const found = samples.filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v));
  assert.ok(found.length <= 1, `${name} ${JSON.stringify(labels)} matches ${found.length} samples`);
  return found[0]?.value;
}

async function scrape(base: string, headers: Record<string, string> = {}): Promise<Sample[]> {
  const response = await fetch(`${base}/metrics`, { headers });
  assert.equal(response.status, 200, await response.clone().text());
  assert.match(response.headers.get('content-type') ?? '', /^text\/plain; version=0\.0\.4/);
  return parseMetrics(await response.text());
}

async function expectForbidden(url: string, headers: Record<string, string> = {}): Promise<void> {
  const response = await fetch(url, { headers });
  assert.equal(response.status, 403);
  const body = (await response.json()) as { error: { code: string; message: string } };
  assert.equal(body.error.code, 'metrics.forbidden');
  assert.doesNotMatch(body.error.message, /\//, 'no paths or internals in the message');
}

function nonLoopbackIpv4(): string {
  const address = Object.values(networkInterfaces())
    .flat()
    .find((i) => i && i.family === 'IPv4' && !i.internal)?.address;
  assert.ok(address, 'this test needs a non-loopback IPv4 interface to make a request that is not from loopback');
  return address;
}

async function waitForSample(
  base: string,
  name: string,
  labels: Record<string, string>,
  expected: number,
  what: string,
): Promise<Sample[]> {
  const deadline = Date.now() + 60_000;
  for (;;) {
    const samples = await scrape(base);
    if (valueOf(samples, name, labels) === expected) return samples;
    if (Date.now() > deadline)
      assert.fail(
        `timed out waiting for ${what}: ${name} ${JSON.stringify(labels)} = ${valueOf(samples, name, labels)}`,
      );
    await new Promise((r) => setTimeout(r, 100));
  }
}

before(async () => {
  dataDir = await newCeremonyDir({ init: true });
  otherDataDir = await copyCeremony(dataDir);
  bytesDataDir = await copyCeremony(dataDir);
  coordinator = await startTestCoordinator({
    dataDir,
    env: { METRICS_TOKEN: TOKEN, TURN_TIMEOUT_MS: String(TURN_TIMEOUT_MS) },
    tickIntervalMs: 100,
    clock,
  });
  // Listening on every interface, so a request can come from a non-loopback address.
  exposed = await startTestCoordinator({
    dataDir: otherDataDir,
    open: false,
    env: { HOST: '0.0.0.0', METRICS_TOKEN: TOKEN },
  });
});

after(async () => {
  await coordinator?.close();
  await exposed?.close();
  await cleanUp(dataDir, otherDataDir, bytesDataDir);
});

describe('metrics during contributions', () => {
  let a: ContributorClient;
  let b: ContributorClient;

  test('a fresh coordinator: phase open, empty queues, every circuit idle and at 0', async () => {
    const samples = await scrape(coordinator.url);
    assert.equal(valueOf(samples, 'ceremony_phase', { phase: 'open' }), 1);
    assert.equal(valueOf(samples, 'ceremony_phase', { phase: 'setup' }), 0);
    for (const circuit of coordinator.config.circuits.map((c) => c.name)) {
      assert.equal(valueOf(samples, 'ceremony_queue_length', { circuit }), 0, circuit);
      assert.equal(valueOf(samples, 'ceremony_circuit_state', { circuit, state: 'idle' }), 1, circuit);
      assert.equal(valueOf(samples, 'ceremony_chain_contributions', { circuit }), 0, circuit);
      assert.equal(valueOf(samples, 'ceremony_contributions_accepted_total', { circuit }), 0, circuit);
      assert.equal(valueOf(samples, 'ceremony_turns_missed_total', { circuit }), 0, circuit);
    }
    assert.ok(valueOf(samples, 'process_resident_memory_bytes')! > 0, 'process metrics are there too');
  });

  test(
    'a turn and a queue show; a refused upload is counted by its code, ' + 'with its upload and verification times',
    async () => {
      a = new ContributorClient(coordinator.url);
      b = new ContributorClient(coordinator.url);
      await a.signInDemo('alice');
      await b.signInDemo('bob');
      await a.join();
      await b.join();
      let samples = await waitForSample(
        coordinator.url,
        'ceremony_circuit_state',
        { circuit: 'register', state: 'turn' },
        1,
        "alice's turn",
      );
      assert.equal(valueOf(samples, 'ceremony_queue_length', { circuit: 'register' }), 1, 'bob waits');

      // A real contribution with one byte of its IC section changed: refused (a contribution may not touch IC).
      const { file } = await a.makeContribution('register');
      const bad = await tamperedCopy(file, `${file}.bad`, (bytes, info) => {
        const at = sectionOffset(info, SECTION.ic) + 5;
        bytes[at] = bytes[at]! ^ 1;
      });
      await a.upload('register', bad);
      await a.waitFor((me) => me.status.lastRefusal !== undefined, 'the refusal');
      samples = await scrape(coordinator.url);
      assert.equal(
        valueOf(samples, 'ceremony_contributions_refused_total', {
          circuit: 'register',
          code: 'contribution.header_mismatch',
        }),
        1,
      );
      assert.equal(valueOf(samples, 'ceremony_contributions_accepted_total', { circuit: 'register' }), 0);
      assert.equal(valueOf(samples, 'ceremony_upload_duration_seconds_count', { circuit: 'register' }), 1);
      assert.equal(valueOf(samples, 'ceremony_verification_duration_seconds_count', { circuit: 'register' }), 1);
      assert.ok(valueOf(samples, 'ceremony_verification_duration_seconds_sum', { circuit: 'register' })! > 0);
    },
  );

  test('an accepted contribution moves the accepted count, the chain length and both histograms', async () => {
    await b.takeTurn('register');
    const samples = await scrape(coordinator.url);
    assert.equal(valueOf(samples, 'ceremony_contributions_accepted_total', { circuit: 'register' }), 1);
    assert.equal(valueOf(samples, 'ceremony_chain_contributions', { circuit: 'register' }), 1);
    assert.equal(valueOf(samples, 'ceremony_upload_duration_seconds_count', { circuit: 'register' }), 2);
    assert.equal(valueOf(samples, 'ceremony_verification_duration_seconds_count', { circuit: 'register' }), 2);
    assert.equal(
      valueOf(samples, 'ceremony_verification_duration_seconds_bucket', { circuit: 'register', le: '+Inf' }),
      2,
    );
  });

  test('a turn that passes its deadline is counted as missed', async () => {
    await a.waitFor((me) => me.status.circuits[0]!.state === 'turn', "alice's second turn on register");
    // Taken (a turn never taken passes on instead, which this counter leaves out), then abandoned.
    await a.takeByDownload('register');
    await a.request('POST', '/api/circuits/register/heartbeat');
    offset += TURN_TIMEOUT_MS + 1000;
    const samples = await waitForSample(
      coordinator.url,
      'ceremony_turns_missed_total',
      { circuit: 'register' },
      1,
      'the missed turn',
    );
    assert.equal(
      valueOf(samples, 'ceremony_contributions_accepted_total', { circuit: 'register' }),
      1,
      'nothing else changed',
    );
  });
});

describe('who may read /metrics', () => {
  test('loopback without sign-in; a request forwarded by a proxy or a wrong token is refused', async () => {
    await scrape(exposed.url.replace('0.0.0.0', '127.0.0.1'));
    await expectForbidden(`${coordinator.url}/metrics`, { 'x-forwarded-for': '203.0.113.9' });
    await expectForbidden(`${coordinator.url}/metrics`, { forwarded: 'for=203.0.113.9' });
    await expectForbidden(`${coordinator.url}/metrics`, { authorization: 'Bearer not-the-token-at-all' });
    await scrape(coordinator.url, { 'x-forwarded-for': '203.0.113.9', authorization: `Bearer ${TOKEN}` });
  });

  test('from another interface: refused without the token, answered with it', async () => {
    const port = new URL(exposed.url).port;
    const base = `http://${nonLoopbackIpv4()}:${port}`;
    await expectForbidden(`${base}/metrics`);
    await expectForbidden(`${base}/metrics`, { authorization: `Bearer ${TOKEN}x` });
    await expectForbidden(`${base}/metrics`, {
      authorization: `Basic ${Buffer.from(`x:${TOKEN}`).toString('base64')}`,
    });
    const samples = await scrape(base, { authorization: `Bearer ${TOKEN}` });
    assert.equal(valueOf(samples, 'ceremony_phase', { phase: 'setup' }), 1);
  });

  test('each coordinator has its own registry: the second saw none of the first one’s contributions', async () => {
    const samples = await scrape(exposed.url.replace('0.0.0.0', '127.0.0.1'));
    assert.equal(valueOf(samples, 'ceremony_contributions_accepted_total', { circuit: 'register' }), 0);
    assert.equal(valueOf(samples, 'ceremony_turns_missed_total', { circuit: 'register' }), 0);
    assert.equal(
      valueOf(samples, 'ceremony_contributions_refused_total', {
        circuit: 'register',
        code: 'contribution.header_mismatch',
      }),
      undefined,
    );
    const first = await scrape(coordinator.url);
    assert.equal(valueOf(first, 'ceremony_contributions_accepted_total', { circuit: 'register' }), 1);
  });

  test('METRICS_TOKEN is validated at start-up', () => {
    assert.throws(
      () => loadServerConfig({ METRICS_TOKEN: 'short' }),
      (error: Error & { code?: string }) => error.code === 'config.invalid' && /METRICS_TOKEN/.test(error.message),
    );
  });
});

interface RawExchange {
  status: number;
  headers: IncomingHttpHeaders;
  body: Buffer;
  /** What the client's socket sent and received, counted when the server closed it. */
  sent: number;
  received: number;
}

/**
 * One request on a connection of its own (Connection: close), so the client's socket counts
 * are exactly this request's bytes on the wire, to compare with the server's counters.
 */
async function rawExchange(
  url: string,
  options: { method?: string; headers?: Record<string, string>; body?: Buffer } = {},
): Promise<RawExchange> {
  const request = httpRequest(url, { method: options.method ?? 'GET', headers: options.headers, agent: false });
  const socket = new Promise<Socket>((resolve) => request.once('socket', resolve));
  request.end(options.body);
  const [response] = (await once(request, 'response')) as [IncomingMessage];
  const chunks: Buffer[] = [];
  for await (const chunk of response) chunks.push(chunk as Buffer);
  const connection = await socket;
  if (!connection.closed) await once(connection, 'close');
  return {
    status: response.statusCode ?? 0,
    headers: response.headers,
    body: Buffer.concat(chunks),
    sent: connection.bytesWritten,
    received: connection.bytesRead,
  };
}

const byteCounters = (samples: Sample[], route: string): { request: number; response: number } => ({
  request: valueOf(samples, 'ceremony_http_request_bytes_total', { route }) ?? Number.NaN,
  response: valueOf(samples, 'ceremony_http_response_bytes_total', { route }) ?? Number.NaN,
});

/**
 * Scrapes until the route group's counters have moved by exactly `expected` since `before`
 * (the server counts a request when its response closes, a moment after the client saw its end);
 * fails at once if they moved further.
 */
async function expectBytesMoved(
  base: string,
  route: string,
  before: Sample[],
  expected: { request: number; response: number },
): Promise<void> {
  const start = byteCounters(before, route);
  const deadline = Date.now() + 10_000;
  for (;;) {
    const now = byteCounters(await scrape(base), route);
    const moved = { request: now.request - start.request, response: now.response - start.response };
    if (moved.request === expected.request && moved.response === expected.response) return;
    assert.ok(
      moved.request <= expected.request && moved.response <= expected.response,
      `${route}: counted ${JSON.stringify(moved)}, the client's sockets ${JSON.stringify(expected)}`,
    );
    if (Date.now() > deadline)
      assert.fail(`${route}: counted ${JSON.stringify(moved)}, the client's sockets ${JSON.stringify(expected)}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe('bytes moved over HTTP, as the server counts them', () => {
  let counted: RunningCoordinator;
  const lines: Array<{ message: string; fields?: Record<string, unknown> }> = [];

  before(async () => {
    const log = {
      info: (message: string, fields?: Record<string, unknown>) => void lines.push({ message, fields }),
      warn: () => {},
    };
    counted = await startTestCoordinator({ dataDir: bytesDataDir, log, tickIntervalMs: 100 });
  });
  after(() => counted?.close());

  test('a zkey download: every byte the client sent and received, headers included', async () => {
    const before = await scrape(counted.url);
    const exchange = await rawExchange(`${counted.url}/api/circuits/register/zkeys/0`);
    assert.equal(exchange.status, 200);
    const size = (await stat(ceremonyPaths(bytesDataDir).zkeyPath('register', 0))).size;
    assert.equal(exchange.body.length, size);
    assert.ok(exchange.received > size, 'the response is the file plus its status line and headers');
    await expectBytesMoved(counted.url, 'zkey_download', before, {
      request: exchange.sent,
      response: exchange.received,
    });
  });

  test('a tus upload (creation and two PATCHes): the bytes of all three requests, the body once', async () => {
    const client = new ContributorClient(counted.url);
    await client.signInDemo('uploader');
    await client.join();
    await client.waitFor((me) => me.status.circuits[0]?.state === 'turn', 'the turn on register');
    // Not a valid contribution (refused once complete, for its history): only its bytes matter here. Its sections
    // are the head's up to there, in a contribution's order, so none of its PATCHes is refused as it arrives.
    const head = await readFile(ceremonyPaths(bytesDataDir).zkeyPath('register', 0));
    const body = editSections(head, (key) => {
      key.sections.sort((a, b) => a.id - b.id);
      const history = sectionOf(key, SECTION.mpc);
      history.data = Buffer.concat([history.data, Buffer.alloc(MIN_CONTRIBUTION_RECORD_BYTES + 123, 7)]);
    });
    const before = await scrape(counted.url);
    // Sent over a socket of the test's own, whose bytes it counts; the headers are the client's.
    const created = await rawExchange(`${counted.url}/api/circuits/register/contributions`, {
      method: 'POST',
      headers: client.creationHeaders('register', { length: body.length }),
    });
    assert.equal(created.status, 201, created.body.toString());
    const location = new URL(created.headers.location!, counted.url).href;
    const half = Math.floor(body.length / 2);
    const patch = (offset: number, part: Buffer) =>
      rawExchange(location, { method: 'PATCH', headers: client.patchHeaders(offset), body: part });
    const first = await patch(0, body.subarray(0, half));
    assert.equal(first.status, 204, first.body.toString());
    const second = await patch(half, body.subarray(half));
    assert.equal(second.status, 204, second.body.toString());
    const exchanges = [created, first, second];
    const sent = exchanges.reduce((sum, e) => sum + e.sent, 0);
    assert.ok(sent > body.length, 'the requests carry the body plus their request lines and headers');
    await expectBytesMoved(counted.url, 'contribution_upload', before, {
      request: sent,
      response: exchanges.reduce((sum, e) => sum + e.received, 0),
    });
    // The moment the last byte arrived is logged, with the upload's length (the bench times the coordinator's share
    // from it).
    const complete = lines.find((l) => l.message === 'contribution upload complete');
    assert.deepEqual(complete?.fields, { circuit: 'register', contributor: 'demo:uploader', bytes: body.length });
  });

  test('each path belongs to its route group', () => {
    const groups = Object.fromEntries(
      [
        '/api/circuits/register/contributions',
        '/api/circuits/register/contributions/abc123',
        '/api/circuits/register/zkeys/3',
        '/api/circuits/register/r1cs',
        '/api/ptau',
        '/api/final/register.zkey',
        '/api/me',
        '/api/circuits/register/heartbeat',
        '/healthz',
        '/auth/demo',
        '/metrics',
        '/',
        '/assets/index-abc.js',
        '/console/',
      ].map((p) => [p, httpRouteGroup(p)]),
    );
    assert.deepEqual(groups, {
      '/api/circuits/register/contributions': 'contribution_upload',
      '/api/circuits/register/contributions/abc123': 'contribution_upload',
      '/api/circuits/register/zkeys/3': 'zkey_download',
      '/api/circuits/register/r1cs': 'file_download',
      '/api/ptau': 'file_download',
      '/api/final/register.zkey': 'file_download',
      '/api/me': 'api',
      '/api/circuits/register/heartbeat': 'api',
      '/healthz': 'api',
      '/auth/demo': 'auth',
      '/metrics': 'metrics',
      '/': 'web',
      '/assets/index-abc.js': 'web',
      '/console/': 'web',
    });
  });

  test('the route label is one of a fixed set, whatever the paths asked for', async () => {
    for (const route of [
      '/no/such/page-4711',
      '/api/no-such-route-4712',
      '/auth/nothing-4713',
      '/api/circuits/register/zkeys/99',
    ]) {
      await rawExchange(`${counted.url}${route}`);
    }
    const routes = new Set(
      (await scrape(counted.url))
        .filter((s) => s.name === 'ceremony_http_request_bytes_total')
        .map((s) => s.labels.route),
    );
    assert.deepEqual([...routes].sort(), [...HTTP_ROUTE_GROUPS].sort());
  });
});
