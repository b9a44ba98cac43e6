/**
 * The presence stream (GET /api/me/presence) against the real coordinator, on a clock the test
 * controls, held by the terminal client's PresenceHolder: a contributor granted a turn whose
 * stream then closes (a killed terminal, a closed tab) costs the circuit DISCONNECT_GRACE_MS and one
 * tick, not TAKE_TURN_MS, and the queue log says when the stream closed; the stream is an
 * event-stream that says its keep-alive pace; each contributor may hold three at once and the
 * coordinator MAX_PRESENCE_STREAMS in all, each refusal with its own code; stopping the hold ends it
 * at once; stopping the coordinator ends the streams it holds.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { fetchedPresence, PresenceHolder, terminalReopenPauseMs } from '../../client/presence-holder.ts';
import { ContributorClient } from '../helpers/contributor-client.ts';
import { startTestCoordinator, type TestCoordinator } from '../helpers/test-coordinator.ts';
import { ManualClock } from '../../server/clock.ts';
import { checkQueueLog, type QueueLogEntry } from '../../core/queue-log/queue-log-entry.ts';

const PRESENCE = 60_000;
const TAKE = 30_000;
const GRACE = 5_000;
const TICK = 1000;
const clock = new ManualClock(Date.now());
let coordinator: TestCoordinator;

before(async () => {
  coordinator = await startTestCoordinator({
    env: {
      PRESENCE_MS: String(PRESENCE),
      TAKE_TURN_MS: String(TAKE),
      // Standby off: its moments would come first in nextDueAt, which a test here reads.
      TAKE_PRIORITY_MS: '0',
      DISCONNECT_GRACE_MS: String(GRACE),
      MAX_PRESENCE_STREAMS: '5',
    },
    clock,
    tickIntervalMs: 3_600_000,
  });
});

after(async () => {
  await coordinator?.close();
});

async function signedIn(name: string): Promise<ContributorClient> {
  const client = new ContributorClient(coordinator.url);
  await client.signInDemo(name);
  return client;
}

/** Resolves once `predicate` holds, checked every 20 ms of real time (the server hears a close asynchronously). */
async function until(predicate: () => boolean, what: string): Promise<void> {
  for (const started = Date.now(); !predicate(); await new Promise((r) => setTimeout(r, 20)))
    if (Date.now() - started > 10_000) assert.fail(`timed out waiting until ${what}`);
}

function openStream(client: ContributorClient, signal: AbortSignal): Promise<Response> {
  return fetch(`${coordinator.url}/api/me/presence`, { headers: client.sessionHeaders(), signal });
}

test('a turn granted to one whose stream then closes passes on after the grace, not TAKE_TURN_MS', async () => {
  const gone = await signedIn('gone');
  const next = await signedIn('next');
  const hold = new PresenceHolder({ connect: fetchedPresence(gone), reopenPauseMs: terminalReopenPauseMs });
  hold.hold(true);
  await gone.join();
  await next.join();
  coordinator.service.tick();
  assert.equal((await gone.progress('register')).state, 'turn', 'the first in line is granted the turn');
  const dueWhileHeld = coordinator.lobby.nextDueAt();
  const stoppedAt = clock.now();
  await hold.stop(); // the terminal is killed before it took the turn
  await until(() => coordinator.lobby.nextDueAt() !== dueWhileHeld, 'the coordinator heard the stream close');
  assert.equal(coordinator.lobby.nextDueAt(), stoppedAt + GRACE + 1);
  for (let waited = 0; waited <= GRACE; waited += TICK) {
    clock.advance(TICK);
    coordinator.service.tick();
  }
  assert.equal((await next.progress('register')).state, 'turn', 'the next in line has it one tick after the grace');
  assert.ok(clock.now() - stoppedAt <= GRACE + TICK, 'the circuit waited the grace and a tick, far less than 30 s');
  const page = await next.request<{ entries: QueueLogEntry[] }>('GET', '/api/queue-log');
  const log = checkQueueLog(coordinator.config.id, page.entries, 'of the coordinator');
  const lapse = log.find((e) => e.type === 'lapsed');
  assert.ok(lapse?.type === 'lapsed' && lapse.taken === false);
  assert.equal(lapse.disconnectedAt, new Date(stoppedAt).toISOString(), 'the log says when the stream closed');
  assert.equal((await gone.progress('register')).state, 'waiting', 'the one who left keeps a place in line');
});

test('an event stream stating its pace; three per contributor, five in all, each refusal coded', async () => {
  const stop = new AbortController();
  try {
    const many = await signedIn('many');
    const first = await openStream(many, stop.signal);
    assert.equal(first.status, 200);
    assert.match(first.headers.get('content-type') ?? '', /^text\/event-stream/);
    const reader = first.body!.getReader();
    const hello = new TextDecoder().decode((await reader.read()).value);
    assert.match(hello, /event: hello\ndata: \{"keepAliveMs":15000\}\n\n/, 'a quarter of PRESENCE_MS, at most 15 s');
    for (let i = 0; i < 2; i++) assert.equal((await openStream(many, stop.signal)).status, 200);
    const fourth = await openStream(many, stop.signal);
    assert.equal(fourth.status, 429);
    assert.equal(((await fourth.json()) as { error: { code: string } }).error.code, 'presence.too_many_streams');
    const other = await signedIn('other');
    for (let i = 0; i < 2; i++) assert.equal((await openStream(other, stop.signal)).status, 200);
    const sixth = await openStream(other, stop.signal);
    assert.equal(sixth.status, 503);
    const refusal = (await sixth.json()) as { error: { code: string; message: string } };
    assert.equal(refusal.error.code, 'presence.streams_full');
    assert.doesNotMatch(refusal.error.message, /\//, 'no path or internals in the message');
  } finally {
    stop.abort();
  }
  const again = await signedIn('again');
  const stop2 = new AbortController();
  let status = 0;
  // Closed streams are counted out as soon as the server hears the close.
  for (const started = Date.now(); status !== 200 && Date.now() - started < 10_000;) {
    const response = await openStream(again, stop2.signal).catch(() => undefined);
    status = response?.status ?? 0;
    if (status !== 200) await response?.body?.cancel();
  }
  stop2.abort();
  assert.equal(status, 200, 'the closed streams were released');
});

test('stopping the hold ends it at once, not after the pause before a stream is opened again', async () => {
  const client = await signedIn('stops');
  let opened!: () => void;
  const open = new Promise<void>((resolve) => (opened = resolve));
  const fetchOnce = client.fetch.bind(client);
  client.fetch = async (...args: Parameters<typeof fetchOnce>) => {
    const response = await fetchOnce(...args);
    opened();
    return response;
  };
  const hold = new PresenceHolder({ connect: fetchedPresence(client), reopenPauseMs: terminalReopenPauseMs });
  hold.hold(true);
  await open;
  const started = Date.now();
  await hold.stop();
  // It waited out the 2 s reopen pause before: at the end of every terminal run, before its last line.
  assert.ok(Date.now() - started < 1000, `stop() took ${Date.now() - started} ms`);
});

test('stopping the coordinator ends the streams it holds', async () => {
  const last = await signedIn('last');
  const response = await openStream(last, new AbortController().signal);
  const reader = response.body!.getReader();
  await reader.read(); // hello
  const ended = (async () => {
    try {
      for (;;) if ((await reader.read()).done) return 'ended';
    } catch {
      return 'ended';
    }
  })();
  await coordinator.close();
  assert.equal(await ended, 'ended');
});
