/**
 * GET /metrics over real HTTP on real coordinators: the figures move as contributions are refused
 * and accepted and as a turn is missed; answered on loopback without sign-in, refused (403
 * metrics.forbidden) to a request from another interface or forwarded by a proxy unless it
 * carries the METRICS_TOKEN bearer token; two coordinators in one process keep separate figures.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { networkInterfaces } from 'node:os';
import { copyCeremony, newCeremonyDir } from '../fixtures/ceremony-fixture.ts';
import { ContributorClient } from '../helpers/contributor-client.ts';
import { loadServerConfig } from '../../server/config/server-config.ts';
import type { RunningCoordinator } from '../../server/start-coordinator.ts';
import { sectionOffset, tamperedCopy } from '../helpers/zkey-tamper.ts';
import { startTestCoordinator } from '../helpers/test-coordinator.ts';
import { cleanUp } from '../helpers/clean-up.ts';
import { SECTION } from '../../core/zkey/zkey-file.ts';

const TOKEN = 'metrics-token-for-tests-0123456789';
const TURN_TIMEOUT_MS = 10 * 60_000;
let dataDir: string;
let otherDataDir: string;
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
      const labels = Object.fromEntries([...(match[2] ?? '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)].map((m) => [m[1]!, m[2]!]));
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

async function waitForSample(base: string, name: string, labels: Record<string, string>, expected: number, what: string): Promise<Sample[]> {
  const deadline = Date.now() + 60_000;
  for (;;) {
    const samples = await scrape(base);
    if (valueOf(samples, name, labels) === expected) return samples;
    if (Date.now() > deadline) assert.fail(`timed out waiting for ${what}: ${name} ${JSON.stringify(labels)} = ${valueOf(samples, name, labels)}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

before(async () => {
  dataDir = await newCeremonyDir({ init: true });
  otherDataDir = await copyCeremony(dataDir);
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
  await cleanUp(dataDir, otherDataDir);
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

  test('a turn and a queue show; a refused upload is counted by its code, with its upload and verification times', async () => {
    a = new ContributorClient(coordinator.url);
    b = new ContributorClient(coordinator.url);
    await a.signInDemo('alice');
    await b.signInDemo('bob');
    await a.join();
    await b.join();
    let samples = await waitForSample(coordinator.url, 'ceremony_circuit_state', { circuit: 'register', state: 'turn' }, 1, "alice's turn");
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
    assert.equal(valueOf(samples, 'ceremony_contributions_refused_total', { circuit: 'register', code: 'contribution.header_mismatch' }), 1);
    assert.equal(valueOf(samples, 'ceremony_contributions_accepted_total', { circuit: 'register' }), 0);
    assert.equal(valueOf(samples, 'ceremony_upload_duration_seconds_count', { circuit: 'register' }), 1);
    assert.equal(valueOf(samples, 'ceremony_verification_duration_seconds_count', { circuit: 'register' }), 1);
    assert.ok(valueOf(samples, 'ceremony_verification_duration_seconds_sum', { circuit: 'register' })! > 0);
  });

  test('an accepted contribution moves the accepted count, the chain length and both histograms', async () => {
    await b.takeTurn('register');
    const samples = await scrape(coordinator.url);
    assert.equal(valueOf(samples, 'ceremony_contributions_accepted_total', { circuit: 'register' }), 1);
    assert.equal(valueOf(samples, 'ceremony_chain_contributions', { circuit: 'register' }), 1);
    assert.equal(valueOf(samples, 'ceremony_upload_duration_seconds_count', { circuit: 'register' }), 2);
    assert.equal(valueOf(samples, 'ceremony_verification_duration_seconds_count', { circuit: 'register' }), 2);
    assert.equal(valueOf(samples, 'ceremony_verification_duration_seconds_bucket', { circuit: 'register', le: '+Inf' }), 2);
  });

  test('a turn that passes its deadline is counted as missed', async () => {
    await a.waitFor((me) => me.status.circuits[0]!.state === 'turn', "alice's second turn on register");
    offset += TURN_TIMEOUT_MS + 1000;
    const samples = await waitForSample(coordinator.url, 'ceremony_turns_missed_total', { circuit: 'register' }, 1, 'the missed turn');
    assert.equal(valueOf(samples, 'ceremony_contributions_accepted_total', { circuit: 'register' }), 1, 'nothing else changed');
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
    await expectForbidden(`${base}/metrics`, { authorization: `Basic ${Buffer.from(`x:${TOKEN}`).toString('base64')}` });
    const samples = await scrape(base, { authorization: `Bearer ${TOKEN}` });
    assert.equal(valueOf(samples, 'ceremony_phase', { phase: 'setup' }), 1);
  });

  test('each coordinator has its own registry: the second saw none of the first one’s contributions', async () => {
    const samples = await scrape(exposed.url.replace('0.0.0.0', '127.0.0.1'));
    assert.equal(valueOf(samples, 'ceremony_contributions_accepted_total', { circuit: 'register' }), 0);
    assert.equal(valueOf(samples, 'ceremony_turns_missed_total', { circuit: 'register' }), 0);
    assert.equal(valueOf(samples, 'ceremony_contributions_refused_total', { circuit: 'register', code: 'contribution.header_mismatch' }), undefined);
    const first = await scrape(coordinator.url);
    assert.equal(valueOf(first, 'ceremony_contributions_accepted_total', { circuit: 'register' }), 1);
  });

  test('METRICS_TOKEN is validated at start-up', () => {
    assert.throws(() => loadServerConfig({ METRICS_TOKEN: 'short' }), (error: Error & { code?: string }) => error.code === 'config.invalid' && /METRICS_TOKEN/.test(error.message));
  });
});
