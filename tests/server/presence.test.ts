/**
 * Presence over HTTP against the real coordinator, on a clock the test controls: a contributor who
 * closes the page while waiting costs the circuit at most TAKE_TURN_MS and one tick when their turn
 * comes, and takes their turn when they come back (their poll makes them present again, their first
 * download takes the turn); one whose client stops after taking the turn costs it at most
 * TURN_SILENCE_MS and one tick; GET /api/queue-log shows every step, hash-chained, within its limits.
 * Then the removal receipt a contributor gets verifies with `ceremony verify-receipt` against the
 * published log, and one for a step the published log lacks fails.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { ContributorClient, HttpError } from '../helpers/contributor-client.ts';
import { startTestCoordinator, type TestCoordinator } from '../helpers/test-coordinator.ts';
import { ManualClock } from '../../server/clock.ts';
import {
  checkQueueLog,
  QUEUE_LOG_FILE,
  queueLogGenesisHash,
  type QueueLogEntry,
} from '../../core/queue-log/queue-log-entry.ts';
import { chainEntryHash } from '../../core/transcript/hash-chain.ts';
import { auditorConfigOf, devPtauHash } from '../fixtures/ceremony-fixture.ts';
import { publishCeremony } from '../../core/publish/publish-ceremony.ts';
import { runCli } from '../helpers/run-cli.ts';
import { cleanUp } from '../helpers/clean-up.ts';

const PRESENCE = 60_000;
const TAKE = 30_000;
const SILENCE = 120_000;
/** The coordinator's tick, run by hand here: the "one poll" a granted turn waits for at most. */
const TICK = 1000;
const TOKEN = 'coordinator-token-for-presence';
const clock = new ManualClock(Date.now());
let coordinator: TestCoordinator;
let work: string;

before(async () => {
  coordinator = await startTestCoordinator({
    // Presence, the queue log and its receipts are the register queue's alone: a ceremony of that one
    // circuit shows them, and its start, publication and audit cost a ninth of the nine circuits'.
    ceremony: { circuits: ['register'] },
    env: {
      PRESENCE_MS: String(PRESENCE),
      TAKE_TURN_MS: String(TAKE),
      TURN_SILENCE_MS: String(SILENCE),
      COORDINATOR_TOKEN: TOKEN,
      RATE_LIMIT_QUEUE_LOG: '40',
    },
    clock,
    tickIntervalMs: 3_600_000,
  });
  work = await mkdtemp(path.join(tmpdir(), 'presence-'));
});

after(async () => {
  await coordinator?.close();
  await cleanUp(work);
});

/** Moves the clock on by `ms`, one tick at a time, as the coordinator's timer would. */
function passTime(ms: number): void {
  for (let done = 0; done < ms; done += TICK) {
    clock.advance(Math.min(TICK, ms - done));
    coordinator.service.tick();
  }
}

/** Moves time on a tick at a time (up to 10 min) until `client` holds register's turn; when it did. */
async function whenTurnReaches(client: ContributorClient): Promise<number | undefined> {
  for (let waited = 0; waited < 10 * 60_000; waited += TICK) {
    passTime(TICK);
    if ((await client.progress('register')).state === 'turn') return clock.now();
  }
  return undefined;
}

async function queueLog(client: ContributorClient, query = ''): Promise<QueueLogEntry[]> {
  const page = await client.request<{ ceremony: string; entries: QueueLogEntry[] }>('GET', `/api/queue-log${query}`);
  return page.entries;
}

test(
  'a contributor who closes the page while waiting costs the circuit at most TAKE_TURN_MS + one tick ' +
    'when their turn comes, and takes their turn when they come back',
  { timeout: 240_000 },
  async () => {
    const first = new ContributorClient(coordinator.url);
    const gone = new ContributorClient(coordinator.url);
    const third = new ContributorClient(coordinator.url);
    await first.signInDemo('first');
    await gone.signInDemo('gone');
    await third.signInDemo('third');
    await first.join();
    await gone.join(); // and then the page is closed: no more polls
    await third.join();
    assert.equal((await first.progress('register')).state, 'turn');
    await first.request('POST', '/api/circuits/register/heartbeat');

    passTime(20_000); // `gone` was seen 20 s ago: not away yet when the circuit frees
    await third.me();
    await first.request('POST', '/api/me/leave');
    const freedAt = clock.now();
    // Read from the lobby, not by her (a poll of hers would be her page open again).
    const state = () => coordinator.lobby.status('demo:gone').circuits[0]!.state;
    assert.equal(state(), 'turn', 'her turn comes while she is gone');
    // She stays gone: nobody downloads, nobody heartbeats.
    const grantedToThird = await whenTurnReaches(third);
    assert.ok(grantedToThird !== undefined, 'the turn reached the next in line');
    const idle = grantedToThird - freedAt;
    assert.ok(idle <= TAKE + TICK, `the circuit waited ${idle} ms for nobody (at most ${TAKE + TICK})`);
    await assert.rejects(
      gone.request('POST', '/api/circuits/register/heartbeat'),
      (error: unknown) => error instanceof HttpError && error.code === 'lobby.not_your_turn',
    );
    assert.equal(state(), 'waiting', 'back in her place');
    // A missed turn (every turn ended without a contribution is one), her first: her place is kept.
    assert.equal(coordinator.lobby.queueEntries().find((e) => e.contributorId === 'demo:gone')?.missedTurns, 1);

    // She comes back once third is done: her page's poll makes her present and gives her the free
    // circuit at once, not at the next tick.
    await third.takeTurn('register');
    const back = await gone.me();
    assert.equal(back.status.circuits[0]!.state, 'turn', 'back, she gets the free circuit in the same request');
    const inputs = await gone.fetch('GET', '/api/circuits/register/contribution-inputs');
    await inputs.body?.cancel();
    passTime(TAKE + TICK);
    assert.equal((await gone.progress('register')).state, 'turn', 'her download took the turn: it stays hers');
    const accepted = await gone.takeTurn('register');
    assert.equal(accepted.status.circuits[0]!.state, 'accepted');

    const log = checkQueueLog(coordinator.config.id, await queueLog(gone, '?limit=1000'), 'of the coordinator');
    const hers = log.flatMap((e) =>
      e.type !== 'rules' && e.contributor === 'demo:gone' && e.circuit === 'register' ? [e] : [],
    );
    assert.deepEqual(
      hers.map((e) => e.type),
      ['join', 'granted', 'lapsed', 'back', 'granted', 'taken', 'accepted'],
    );
    assert.deepEqual(hers[2]!.type === 'lapsed' && [hers[2]!.taken, hers[2]!.missedTurns], [false, 1], 'not taken');

    // The log's file is what the table holds.
    await new Promise((resolve) => setImmediate(resolve));
    const file = await readFile(path.join(coordinator.dataDir, QUEUE_LOG_FILE), 'utf8');
    assert.equal(file, log.map((e) => `${JSON.stringify(e)}\n`).join(''));
  },
);

test(
  'a contributor whose client stops after taking the turn costs the circuit at most TURN_SILENCE_MS + one tick',
  { timeout: 240_000 },
  async () => {
    const silent = new ContributorClient(coordinator.url);
    const next = new ContributorClient(coordinator.url);
    await silent.signInDemo('silent');
    await next.signInDemo('next');
    await silent.join();
    await next.join();
    coordinator.service.tick();
    assert.equal((await silent.progress('register')).state, 'turn');
    const inputs = await silent.fetch('GET', '/api/circuits/register/contribution-inputs');
    await inputs.body?.cancel();
    const lastHeard = clock.now();
    // Then the laptop closes: no heartbeat, no upload. `next` keeps polling.
    const grantedToNext = await whenTurnReaches(next);
    assert.ok(grantedToNext !== undefined, 'the turn reached the next in line before its 10-minute deadline');
    const idle = grantedToNext - lastHeard;
    assert.ok(idle > SILENCE && idle <= SILENCE + TICK, `the circuit waited ${idle} ms (at most ${SILENCE + TICK})`);
    const gone = coordinator.lobby.status('demo:silent').circuits[0]!;
    assert.equal(gone.state, 'waiting', 'a missed turn: back of the line, after the cooldown');
    await next.takeTurn('register');

    const log = checkQueueLog(coordinator.config.id, await queueLog(next, '?limit=1000'), 'of the coordinator');
    const lapse = log.find((e) => e.type === 'lapsed' && e.contributor === 'demo:silent');
    assert.ok(lapse?.type === 'lapsed');
    assert.deepEqual(
      [lapse.taken, lapse.missedTurns, lapse.silentSince],
      [true, 1, new Date(lastHeard).toISOString()],
      'a missed turn, saying when its client was last heard from',
    );
  },
);

test(
  'a removal receipt verifies against the published log; one for a step the published log lacks fails',
  {
    timeout: 240_000,
  },
  async () => {
    const removed = new ContributorClient(coordinator.url);
    await removed.signInDemo('removed');
    await removed.join();
    const admin = new ContributorClient(coordinator.url);
    await admin.signInCoordinator(TOKEN);
    await admin.request('POST', '/api/admin/queue/remove', { contributorId: 'demo:removed' });
    const answer = await removed.request<{ receipts: unknown[]; steps: Array<{ body: string }> }>(
      'GET',
      '/api/me/receipts',
    );
    assert.deepEqual(
      answer.steps.map((s) => JSON.parse(s.body).step),
      ['join', 'removal'],
    );
    const receipts = path.join(work, 'receipts.json');
    await writeFile(receipts, JSON.stringify(answer));
    await new Promise((resolve) => setImmediate(resolve)); // the log's file catches up after the commit
    const published = path.join(work, 'published');
    await publishCeremony(coordinator.dataDir, published);

    const ok = await runCli(['verify-receipt', receipts, published]);
    assert.equal(ok.code, 0, ok.stdout + ok.stderr);
    assert.match(ok.stdout, /^removal register \(coordinator\) \(demo:removed\) ok: recorded as entry \d+ of \d+/m);
    const online = await runCli(['verify-receipt', receipts, '--coordinator', coordinator.url]);
    assert.equal(online.code, 0, online.stdout + online.stderr);

    // A publication whose log stops before the removal: the receipt's step is not in it.
    const text = await readFile(path.join(published, QUEUE_LOG_FILE), 'utf8');
    const removal = JSON.parse(answer.steps[1]!.body).queueLog.seq as number;
    await writeFile(
      path.join(published, QUEUE_LOG_FILE),
      text
        .split('\n')
        .slice(0, removal)
        .map((line) => `${line}\n`)
        .join(''),
    );
    const lacking = await runCli(['verify-receipt', receipts, published]);
    assert.equal(lacking.code, 1, lacking.stdout + lacking.stderr);
    assert.match(
      lacking.stdout,
      /^removal register \(coordinator\) \(demo:removed\) FAIL \[receipt\.not_in_queue_log\]: /m,
    );
    assert.match(lacking.stdout, /^join register, position \d+ \(demo:removed\) ok: /m);
  },
);

test(
  'ceremony audit replays the published queue log: it passes, and a hand-edited turn out of order fails',
  {
    timeout: 240_000,
  },
  async () => {
    await new Promise((resolve) => setImmediate(resolve));
    const audited = path.join(work, 'audited');
    await publishCeremony(coordinator.dataDir, audited);
    // A ceremony of one circuit: the auditor's config is the folder's own (the checkout's has nine).
    const config = ['--config', auditorConfigOf(coordinator.dataDir)];
    const pin = ['--quiet', '--in-progress', ...config, '--ptau-hash', await devPtauHash()];
    const clean = await runCli(['audit', audited, ...pin]);
    assert.equal(clean.code, 0, clean.stdout + clean.stderr);
    assert.match(
      clean.stdout,
      /^queue log ok: \d+ entries, hash chain intact; \d+ turns granted, each to the first in line/m,
    );

    // The turn `gone` got when `first` left handed to `third`, behind her in line; hashes redone.
    const file = path.join(audited, QUEUE_LOG_FILE);
    const entries = (await readFile(file, 'utf8'))
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as Record<string, unknown>);
    const grant = entries.findIndex((e) => e.type === 'granted' && e.contributor === 'demo:gone');
    entries[grant] = { ...entries[grant], contributor: 'demo:third', name: 'third' };
    let prevHash = queueLogGenesisHash(coordinator.config.id);
    for (const entry of entries) {
      entry.prevHash = prevHash;
      entry.hash = prevHash = chainEntryHash(entry);
    }
    await writeFile(file, entries.map((e) => `${JSON.stringify(e)}\n`).join(''));
    const unfair = await runCli(['audit', audited, ...pin]);
    assert.equal(unfair.code, 1, unfair.stdout + unfair.stderr);
    assert.match(
      unfair.stdout,
      new RegExp(
        `^queue log FAIL: \\[audit\\.turn_out_of_order\\] entry ${grant} ` +
          '\\(granted register, demo:third\\) gives the ' +
          'turn to demo:third, but demo:gone \\(in line since entry \\d+, present and eligible\\) was first in line',
        'm',
      ),
    );
  },
);

test('GET /api/queue-log pages, filters, refuses a bad query with its code, and is rate-limited', async () => {
  const reader = new ContributorClient(coordinator.url);
  const newest = await queueLog(reader, '?before=1000000&limit=2');
  assert.equal(newest.length, 2);
  assert.ok(newest[0]!.seq > newest[1]!.seq, 'newest first');
  const grants = await queueLog(reader, '?type=granted&circuit=register');
  assert.ok(grants.length >= 3 && grants.every((e) => e.type === 'granted' && e.circuit === 'register'));
  const byName = await queueLog(reader, '?contributor=gon');
  assert.ok(byName.length > 0 && byName.every((e) => e.type !== 'rules' && e.name === 'gone'));
  for (const bad of ['?limit=5000', '?type=nonsense', '?after=1&before=5', '?order=desc']) {
    await assert.rejects(
      reader.request('GET', `/api/queue-log${bad}`),
      (error: unknown) => error instanceof HttpError && error.status === 400 && error.code === 'request.invalid',
      bad,
    );
  }
  let limited: unknown;
  for (let i = 0; i < 60 && limited === undefined; i++)
    await reader.request('GET', '/api/queue-log?limit=1').catch((error: unknown) => (limited = error));
  assert.ok(limited instanceof HttpError && limited.status === 429 && limited.code === 'rate.limited', String(limited));
});
