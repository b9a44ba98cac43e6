/**
 * The contributor driver (client/contributor-driver.ts) on a clock the test moves by hand, against
 * its own api interface answered by a scripted lobby: what a real coordinator would take minutes of
 * waiting to show (turn deadlines, paced polls, a restart) takes no time. The terminal's options
 * (join at the start, steady, turns awaited) and the page's (join when asked, polls during turns).
 * Last, one whole run against a real coordinator.
 */
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { ContributorDriver } from '../../client/contributor-driver.ts';
import {
  RunFailure,
  type DriverApi,
  type DriverClock,
  type DriverOptions,
  type DriverTurn,
  type HeldPoll,
  type TurnFailure,
} from '../../client/contributor-driver-parts.ts';
import { ApiError } from '../../client/api-client.ts';
import type {
  CeremonyView,
  CircuitProgress,
  ContributionView,
  MeView,
  TurnHeartbeat,
} from '../../core/coordinator-api/api-types.ts';
import { HELD_POLL_EVERY_MS, TURN_WAIT_MS, VERDICT_POLL_MS, waitingPollMs } from '../../client/queue-poll-pace.ts';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { coordinatorApi } from '../../client/contributor-driver-parts.ts';
import { CoordinatorClient } from '../../cli/contributor/coordinator-client.ts';
import { FileTurn } from '../../cli/contributor/file-turn.ts';
import { contributionEntropy } from '../../core/crypto/contribution-entropy.ts';
import { ContributorClient } from '../helpers/contributor-client.ts';
import { startTestCoordinator, type ServerEnv } from '../helpers/test-coordinator.ts';

const settle = async (): Promise<void> => {
  for (let i = 0; i < 5; i++) await new Promise((resolve) => setImmediate(resolve));
};

/** Timers fired in order as the test moves the time. */
class ManualClock implements DriverClock {
  private time = 1_000_000;
  private timers: Array<{ at: number; fn: () => void; id: number }> = [];
  private ids = 0;

  now(): number {
    return this.time;
  }

  after(ms: number, fn: () => void): () => void {
    const id = ++this.ids;
    this.timers.push({ at: this.time + ms, fn, id });
    return () => (this.timers = this.timers.filter((t) => t.id !== id));
  }

  async advance(ms: number): Promise<void> {
    const end = this.time + ms;
    await settle();
    for (;;) {
      const next = this.timers.filter((t) => t.at <= end).sort((a, b) => a.at - b.at)[0];
      if (!next) break;
      this.timers = this.timers.filter((t) => t !== next);
      this.time = next.at;
      next.fn();
      await settle();
    }
    this.time = end;
    await settle();
  }
}

/** A lobby of one circuit whose moves the test makes; its answers are what `GET /api/me` says. */
class ScriptedLobby implements DriverApi {
  progress: CircuitProgress = { circuit: 'c1', state: 'pending' };
  contributions: ContributionView[] = [];
  requests: string[] = [];
  /** The next `GET /api/me` (and heartbeats) fail with this, while set. */
  down: ApiError | undefined;
  heartbeatRefusal: ApiError | undefined;

  constructor(private readonly clock: ManualClock) {}

  wait(position = 2, eligibleAt?: number): void {
    this.progress = { circuit: 'c1', state: 'waiting', position, etaMs: 60_000, eligibleAt };
    this.changed();
  }

  /** A turn granted ahead and not taken, offered to this entry on standby until `until`. */
  offer(position = 2, until = this.clock.now() + 60_000): void {
    this.progress = { circuit: 'c1', state: 'waiting', position, etaMs: 60_000, standbyUntil: until };
    this.changed();
  }

  grant(): void {
    this.progress = { circuit: 'c1', state: 'turn', startedAt: this.clock.now(), deadline: this.clock.now() + 600_000 };
    this.changed();
  }

  verdict(status: 'accepted' | 'refused', hash = 'h1'): void {
    const id = `k${this.contributions.length + 1}`;
    this.contributions.push({
      id,
      circuit: 'c1',
      status,
      code: status === 'refused' ? 'contribution.invalid' : null,
      message: null,
      contributionHash: status === 'accepted' ? hash : null,
      index: status === 'accepted' ? 1 : null,
      createdAt: this.clock.now(),
      finishedAt: this.clock.now(),
    });
    if (status === 'accepted')
      this.progress = { circuit: 'c1', state: 'accepted', contributionId: id, index: 1, contributionHash: hash };
    else this.wait(1);
  }

  count(request: string): number {
    return this.requests.filter((r) => r === request).length;
  }

  /** The `verdictWaitMs` of each poll that asked the coordinator to hold its answer for a verdict. */
  holds: number[] = [];
  /** Each poll's `turnWaitMs` (undefined: not held for a turn). */
  turnWaits: Array<number | undefined> = [];
  /** Hold polls for a turn as the coordinator does (else answered at once, as an older one that ignores it). */
  holdsTurnPolls = false;
  /** Polls held for a turn are refused with this, while set. */
  turnWaitRefusal: ApiError | undefined;
  heldNow = 0;
  mostHeldAtOnce = 0;
  private released: Array<() => void> = [];

  me(_resend: boolean, hold?: HeldPoll): Promise<MeView> {
    this.requests.push('me');
    if (hold?.verdictWaitMs !== undefined) this.holds.push(hold.verdictWaitMs);
    this.turnWaits.push(hold?.turnWaitMs);
    if (this.down) return Promise.reject(this.down);
    if (hold?.turnWaitMs && this.turnWaitRefusal) return Promise.reject(this.turnWaitRefusal);
    if (!hold?.turnWaitMs || !this.holdsTurnPolls) return Promise.resolve(this.answer());
    return new Promise((resolve, reject) => {
      this.mostHeldAtOnce = Math.max(this.mostHeldAtOnce, ++this.heldNow);
      const done = (): void => {
        cancel();
        this.heldNow--;
        this.released = this.released.filter((r) => r !== answer);
        hold.signal?.removeEventListener('abort', given);
      };
      const answer = (): void => (done(), resolve(this.answer()));
      const given = (): void => (done(), reject(new DOMException('given up', 'AbortError')));
      const cancel = this.clock.after(hold.turnWaitMs!, answer);
      hold.signal?.addEventListener('abort', given, { once: true });
      this.released.push(answer);
    });
  }

  /** The status changed: held polls are answered. */
  private changed(): void {
    for (const answer of [...this.released]) answer();
  }

  private answer(): MeView {
    return {
      principal: { id: 'demo:ada', kind: 'demo', displayName: 'ada' },
      now: this.clock.now(),
      phase: 'open',
      status: { contributorId: 'demo:ada', done: false, circuits: [this.progress] },
      contributions: this.contributions,
    } as unknown as MeView;
  }

  join(): Promise<MeView> {
    this.requests.push('join');
    if (this.progress.state === 'pending') this.wait();
    return Promise.resolve(this.answer());
  }

  leave(): Promise<unknown> {
    this.requests.push('leave');
    return Promise.resolve({});
  }

  heartbeat(): Promise<TurnHeartbeat> {
    this.requests.push('heartbeat');
    if (this.heartbeatRefusal) return Promise.reject(this.heartbeatRefusal);
    return Promise.resolve({ deadline: this.clock.now() + 60_000, heartbeatEveryMs: 20_000 } as TurnHeartbeat);
  }

  ceremony(): Promise<CeremonyView> {
    this.requests.push('ceremony');
    return Promise.resolve({ circuits: [{ name: 'c1', headIndex: 0, headHash: null }] } as unknown as CeremonyView);
  }
}

/** Turns the test ends by hand: each one's signal, and how to end it. */
function heldTurns(): {
  turn: (turn: DriverTurn) => Promise<void>;
  taken: Array<{ turn: DriverTurn; upload: () => void; fail: (error: unknown) => void }>;
} {
  const taken: Array<{ turn: DriverTurn; upload: () => void; fail: (error: unknown) => void }> = [];
  const turn = (t: DriverTurn): Promise<void> =>
    new Promise((resolve, reject) => {
      t.signal.addEventListener('abort', () => reject(t.signal.reason), { once: true });
      taken.push({ turn: t, upload: resolve, fail: reject });
    });
  return { turn, taken };
}

interface Told {
  verdicts: Array<[string, number]>;
  failures: TurnFailure[];
  /** Turns started, and whether on standby. */
  started: boolean[];
  /** Standby turns another entry took first. */
  elsewhere: number;
  dropped: number;
  unanswered: number;
  notes: string[];
}

function driverFor(clock: ManualClock, lobby: ScriptedLobby, side: 'terminal' | 'page') {
  const { turn, taken } = heldTurns();
  const told: Told = { verdicts: [], failures: [], started: [], elsewhere: 0, dropped: 0, unanswered: 0, notes: [] };
  const terminal: Partial<DriverOptions> = {
    joinAtStart: { circuits: ['c1'], everyCircuit: true },
    steady: { signInAgain: () => Promise.resolve() },
    pollDuringTurns: false,
    holdPollsForVerdicts: true,
    confirmLostTurns: true,
    turnRetryPauseMs: 2000,
  };
  const page: Partial<DriverOptions> = {
    pollDuringTurns: true,
    confirmLostTurns: false,
    turnRetryPauseMs: 5000,
    heartbeatRetryMs: 5000,
  };
  const driver = new ContributorDriver({
    api: lobby,
    turn,
    clock,
    ...(side === 'terminal' ? terminal : page),
    view: {
      verdict: (c, attempts) => told.verdicts.push([c.status, attempts]),
      turnFailed: (_circuit, _error, failure) => told.failures.push(failure),
      turnStarting: (_circuit, standby) => told.started.push(standby),
      standbyTakenElsewhere: () => told.elsewhere++,
      turnDropped: () => told.dropped++,
      unanswered: () => told.unanswered++,
      note: (line) => told.notes.push(line),
    },
  } as DriverOptions);
  return { driver, taken, told };
}

test('a whole run: joined, paced polls in line, a turn between heartbeats, verifying, accepted', async () => {
  const clock = new ManualClock();
  const lobby = new ScriptedLobby(clock);
  const { driver, taken, told } = driverFor(clock, lobby, 'terminal');
  const run = driver.run();
  await clock.advance(0);
  assert.deepEqual(lobby.requests, ['me', 'join'], 'asked where it stands, then joined');
  await clock.advance(waitingPollMs(2) - 1);
  assert.equal(lobby.count('me'), 1, 'no poll before the pace for 2nd in line');
  await clock.advance(1);
  assert.equal(lobby.count('me'), 2, 'polled at the pace');
  lobby.grant();
  await clock.advance(waitingPollMs(2));
  assert.equal(taken.length, 1, 'the turn was taken');
  assert.equal(taken[0]!.turn.headIndex, 0);
  assert.equal(lobby.count('heartbeat'), 1, 'a heartbeat as the turn starts');
  const polls = lobby.count('me');
  await clock.advance(20_000);
  assert.equal(lobby.count('heartbeat'), 2, 'the next at the pace the coordinator asked for');
  assert.equal(lobby.count('me'), polls, 'the terminal does not poll during its turn');
  taken[0]!.turn.onHash('h1');
  lobby.progress = { circuit: 'c1', state: 'verifying', contributionId: 'k1' };
  taken[0]!.upload();
  await clock.advance(0);
  assert.equal(lobby.count('me'), polls + 1, 'polled at once after the upload');
  assert.deepEqual(lobby.holds, [], 'that poll, made while the turn was still shown, asks for no hold');
  lobby.verdict('accepted');
  await clock.advance(VERDICT_POLL_MS);
  await run;
  assert.deepEqual(lobby.holds, [10_000], 'verifying, nothing in line: the next poll is held for the verdict');
  assert.deepEqual(told.verdicts, [['accepted', 0]]);
  assert.equal(driver.localHash('c1'), 'h1');
  await clock.advance(60_000);
  assert.equal(lobby.count('heartbeat'), 2, 'no heartbeat after the turn');
});

/** A driver for `side` whose first poll finds its turn granted, once it took it (the page's run caught). */
async function takingTheFirstTurn(side: 'terminal' | 'page') {
  const clock = new ManualClock();
  const lobby = new ScriptedLobby(clock);
  const driven = driverFor(clock, lobby, side);
  lobby.grant();
  const run: Promise<unknown> =
    side === 'page' ? driven.driver.run().catch((error: unknown) => error) : driven.driver.run();
  await clock.advance(0);
  assert.equal(driven.taken.length, 1, 'the turn granted at the start is taken');
  return { clock, lobby, run, ...driven };
}

test('a refusal is counted and said, and the next turn is taken again', async () => {
  const { clock, lobby, taken, told, run } = await takingTheFirstTurn('terminal');
  lobby.progress = { circuit: 'c1', state: 'verifying', contributionId: 'k1' };
  taken[0]!.upload();
  await clock.advance(0);
  lobby.verdict('refused');
  await clock.advance(VERDICT_POLL_MS);
  assert.deepEqual(told.verdicts, [['refused', 1]], 'the refusal said, one attempt counted');
  lobby.grant();
  await clock.advance(waitingPollMs(1));
  assert.equal(taken.length, 2, 'the turn granted again is taken again');
  lobby.progress = { circuit: 'c1', state: 'verifying', contributionId: 'k2' };
  taken[1]!.upload();
  await clock.advance(0);
  lobby.verdict('accepted');
  await clock.advance(VERDICT_POLL_MS);
  await run;
  assert.deepEqual(told.verdicts, [
    ['refused', 1],
    ['accepted', 1],
  ]);
});

test('a refused upload counts as an attempt; the turn is taken again after the pause', async () => {
  const { clock, driver, taken, told, run } = await takingTheFirstTurn('terminal');
  taken[0]!.fail(new ApiError(413, 'upload.too_large', 'too large'));
  await clock.advance(0);
  assert.deepEqual(
    told.failures.map((f) => [f.kind, f.attempts]),
    [['refused', 1]],
  );
  await clock.advance(1999);
  assert.equal(taken.length, 1, 'not before the pause');
  await clock.advance(1);
  assert.equal(taken.length, 2, 'taken again after it');
  driver.stop(new Error('left'));
  await assert.rejects(run, /left/);
});

test('a missed turn (the terminal): the heartbeat refused, the work stopped, the next turn taken', async () => {
  const { clock, lobby, driver, taken, told, run } = await takingTheFirstTurn('terminal');
  lobby.wait(1, clock.now() + 30_000);
  lobby.heartbeatRefusal = new ApiError(409, 'lobby.not_your_turn', 'the turn passed');
  await clock.advance(20_000);
  assert.equal(taken[0]!.turn.signal.aborted, true, 'the work on the lost turn stopped');
  assert.deepEqual(
    told.failures.map((f) => f.kind),
    ['lost'],
  );
  lobby.heartbeatRefusal = undefined;
  lobby.grant();
  await clock.advance(5000);
  assert.equal(taken.length, 2, 'the next turn is taken');
  driver.stop(new Error('left'));
  await assert.rejects(run, /left/);
});

test('a missed turn (the page): the poll says waiting, the work is dropped', async () => {
  const { clock, lobby, driver, taken, told, run } = await takingTheFirstTurn('page');
  lobby.wait(1, clock.now() + 30_000);
  await clock.advance(1000);
  assert.equal(taken[0]!.turn.signal.aborted, true);
  assert.equal(told.dropped, 1);
  assert.deepEqual(told.failures, [], 'a turn taken back is no failure');
  driver.stop();
  await run;
});

test('a coordinator restart: the page polls on through it; a steady run asks again through a busy one', async () => {
  const clock = new ManualClock();
  const lobby = new ScriptedLobby(clock);
  const page = driverFor(clock, lobby, 'page');
  lobby.wait(30);
  const run = page.driver.run().catch((error: unknown) => error);
  await clock.advance(0);
  lobby.down = new ApiError(0, 'network', 'connect ECONNREFUSED');
  await clock.advance(3 * waitingPollMs(30));
  assert.equal(page.told.unanswered, 3, 'each poll without an answer told, and polled again');
  lobby.down = undefined;
  lobby.grant();
  await clock.advance(waitingPollMs(30));
  assert.equal(page.taken.length, 1, 'back: the turn granted meanwhile is taken');
  page.driver.stop();
  await run;

  const busyLobby = new ScriptedLobby(clock);
  const terminal = driverFor(clock, busyLobby, 'terminal');
  busyLobby.wait(30);
  const steady = terminal.driver.run().catch((error: unknown) => error);
  await clock.advance(0);
  busyLobby.down = new ApiError(503, 'verification.unavailable', 'busy');
  await clock.advance(waitingPollMs(30) + 1000 + 2000);
  busyLobby.down = undefined;
  await clock.advance(4000);
  assert.deepEqual(terminal.told.notes, [
    'the coordinator is busy (busy); asking again',
    'the coordinator answers again',
  ]);
  busyLobby.down = new ApiError(0, 'network', 'no answer');
  await clock.advance(waitingPollMs(30));
  const failure = await steady;
  assert.ok(failure instanceof RunFailure && failure.code === 'network', 'no answer past the ride-out ends it');
});

test('leaving mid-wait: the run ends with the reason, and nothing more is asked', async () => {
  const clock = new ManualClock();
  const lobby = new ScriptedLobby(clock);
  const { driver } = driverFor(clock, lobby, 'terminal');
  const run = driver.run();
  await clock.advance(waitingPollMs(2) + 1);
  const asked = lobby.requests.length;
  driver.stop(new DOMException('interrupted', 'AbortError'));
  await assert.rejects(run, /interrupted/);
  await clock.advance(600_000);
  assert.equal(lobby.requests.length, asked);
});

test('standby: an offered turn is taken as a granted one; heartbeats once the download took it', async () => {
  const clock = new ManualClock();
  const lobby = new ScriptedLobby(clock);
  const { driver, taken, told } = driverFor(clock, lobby, 'terminal');
  lobby.offer();
  const run = driver.run();
  await clock.advance(0);
  assert.equal(taken.length, 1, 'the offered turn is started');
  assert.deepEqual(told.started, [true], 'on standby');
  assert.equal(taken[0]!.turn.standby, true);
  assert.equal(lobby.count('ceremony'), 1, 'the head looked up as for a granted turn');
  assert.equal(lobby.count('heartbeat'), 0, 'no heartbeat before the download took the turn');
  lobby.grant(); // the turn's first download took it
  const polls = lobby.count('me');
  await taken[0]!.turn.taken();
  assert.equal(lobby.count('me'), polls + 1, 'one GET /api/me confirms it');
  assert.equal(lobby.count('heartbeat'), 1, 'then it beats as a granted turn');
  await taken[0]!.turn.taken();
  assert.equal(lobby.count('me'), polls + 1, 'confirmed once');
  lobby.progress = { circuit: 'c1', state: 'verifying', contributionId: 'k1' };
  taken[0]!.upload();
  await clock.advance(0);
  lobby.verdict('accepted');
  await clock.advance(VERDICT_POLL_MS);
  await run;
  assert.deepEqual(told.verdicts, [['accepted', 0]]);
  assert.deepEqual(told.failures, []);
});

test('standby taken by another entry first: back to waiting quietly, no upload, an offer taken up once', async () => {
  const clock = new ManualClock();
  const lobby = new ScriptedLobby(clock);
  const { driver, taken, told } = driverFor(clock, lobby, 'terminal');
  lobby.offer(2, clock.now() + 60_000);
  const run = driver.run();
  await clock.advance(0);
  assert.equal(taken.length, 1);
  lobby.wait(2); // another entry took it: the confirm shows waiting
  await assert.rejects(taken[0]!.turn.taken(), { name: 'AbortError' });
  assert.equal(taken[0]!.turn.signal.aborted, true, 'the work stops before computing');
  await clock.advance(0);
  assert.deepEqual(told.failures, [], 'no failure of theirs');
  assert.equal(told.elsewhere, 1, 'said calmly');
  assert.equal(lobby.count('heartbeat'), 0);
  const offer = clock.now() + 30_000;
  lobby.offer(2, offer);
  await clock.advance(waitingPollMs(2));
  assert.equal(taken.length, 2, 'a new offer is taken up at the next poll, no pause after the first');
  lobby.offer(2, offer); // the download did not take it, yet it is still offered
  await assert.rejects(taken[1]!.turn.taken());
  await clock.advance(10 * waitingPollMs(2));
  assert.equal(taken.length, 2, 'the same offer is not downloaded again and again');
  // Not confirmed (a caller that uploads straight away): the refusal as not this turn is quiet too.
  lobby.offer(2, clock.now() + 20_000);
  await clock.advance(waitingPollMs(2));
  assert.equal(taken.length, 3);
  taken[2]!.fail(new ApiError(409, 'lobby.not_your_turn', 'not your turn'));
  await clock.advance(0);
  assert.deepEqual(told.failures, []);
  assert.equal(told.elsewhere, 3);
  driver.stop(new Error('left'));
  await assert.rejects(run, /left/);
});

test('standby interrupted (the download broke off): a failure as any; the offer taken up after the pause', async () => {
  const clock = new ManualClock();
  const lobby = new ScriptedLobby(clock);
  const { driver, taken, told } = driverFor(clock, lobby, 'terminal');
  lobby.offer();
  const run = driver.run();
  await clock.advance(0);
  taken[0]!.fail(new ApiError(0, 'network', 'the download broke off'));
  await clock.advance(0);
  assert.deepEqual(
    told.failures.map((f) => f.kind),
    ['interrupted'],
  );
  assert.equal(told.elsewhere, 0);
  await clock.advance(2000 + waitingPollMs(2));
  assert.equal(taken.length, 2, 'still offered: taken up again once the pause is over');
  driver.stop(new Error('left'));
  await assert.rejects(run, /left/);
});

test('standby on the page: a poll that no longer offers the turn drops its work, no failure', async () => {
  const clock = new ManualClock();
  const lobby = new ScriptedLobby(clock);
  const { driver, taken, told } = driverFor(clock, lobby, 'page');
  lobby.offer(3);
  const run = driver.run().catch((error: unknown) => error);
  await clock.advance(0);
  assert.equal(taken.length, 1);
  await clock.advance(waitingPollMs(3));
  assert.equal(taken[0]!.turn.signal.aborted, false, 'still offered: the turn is being taken');
  lobby.wait(3);
  await clock.advance(waitingPollMs(3));
  assert.equal(taken[0]!.turn.signal.aborted, true);
  assert.deepEqual([told.dropped, told.elsewhere, told.failures.length], [1, 1, 0]);
  driver.stop();
  await run;
});

test('next in line, polls are held for a turn (turnWaitMs), one at a time, and a grant is taken at once', async () => {
  const clock = new ManualClock();
  const lobby = new ScriptedLobby(clock);
  lobby.holdsTurnPolls = true;
  const { driver, taken } = driverFor(clock, lobby, 'terminal');
  lobby.wait(3);
  const run = driver.run();
  await clock.advance(0);
  assert.deepEqual(lobby.turnWaits, [undefined], 'the first poll, not knowing where it stands, is not held');
  await clock.advance(HELD_POLL_EVERY_MS);
  assert.deepEqual(lobby.turnWaits, [undefined, TURN_WAIT_MS], 'then held, at the pace of the timed polls');
  await clock.advance(TURN_WAIT_MS - 1);
  assert.equal(lobby.count('me'), 2, 'nothing asked while the poll is held');
  lobby.wait(1);
  await clock.advance(0);
  assert.equal(lobby.count('me'), 3, 'a new place answers it; the next is held at once (its pace has passed)');
  await clock.advance(TURN_WAIT_MS);
  assert.equal(lobby.count('me'), 4, 'a held poll with nothing new ends after turnWaitMs, and the next goes out');
  lobby.grant();
  await clock.advance(0);
  assert.equal(taken.length, 1, 'the grant is seen within the round trip');
  assert.equal(lobby.mostHeldAtOnce, 1, 'never two held at once');
  assert.deepEqual(lobby.turnWaits.slice(1), [TURN_WAIT_MS, TURN_WAIT_MS, TURN_WAIT_MS]);
  driver.stop(new Error('left'));
  await assert.rejects(run, /left/);
});

test('a held poll the page asks to repeat is asked again at once, unheld; far in line, polls are timed', async () => {
  const clock = new ManualClock();
  const lobby = new ScriptedLobby(clock);
  lobby.holdsTurnPolls = true;
  const { driver } = driverFor(clock, lobby, 'page');
  lobby.wait(10);
  const run = driver.run().catch((error: unknown) => error);
  await clock.advance(3 * waitingPollMs(10));
  assert.deepEqual(lobby.turnWaits, [undefined, undefined, undefined, undefined], 'not next in line: timed');
  lobby.wait(2);
  await clock.advance(waitingPollMs(10));
  assert.equal(lobby.heldNow, 1, 'next in line: held, at once after the answer that moved the place');
  await driver.pollNow();
  await clock.advance(0);
  assert.equal(lobby.heldNow, 0, 'the held poll given up');
  assert.deepEqual(lobby.turnWaits.slice(-2), [TURN_WAIT_MS, undefined], 'and asked again unheld, once');
  assert.equal(lobby.mostHeldAtOnce, 1);
  driver.stop();
  await clock.advance(0);
  await run;
});

for (const [refusal, timedFor] of [
  [new ApiError(400, 'request.invalid', 'unknown turnWaitMs'), Infinity],
  [new ApiError(429, 'me.too_many_held_polls', 'two polls held already'), 60_000],
] as const) {
  test(`a held poll refused (${refusal.status} ${refusal.code}) is asked again unheld, then timed polls`, async () => {
    const clock = new ManualClock();
    const lobby = new ScriptedLobby(clock);
    lobby.holdsTurnPolls = true;
    lobby.turnWaitRefusal = refusal;
    const { driver, told } = driverFor(clock, lobby, 'terminal');
    lobby.wait(1);
    const run = driver.run();
    await clock.advance(HELD_POLL_EVERY_MS);
    assert.deepEqual(lobby.turnWaits, [undefined, TURN_WAIT_MS, undefined], 'refused, then asked unheld at once');
    lobby.turnWaitRefusal = undefined;
    await clock.advance(10 * waitingPollMs(1));
    assert.equal(lobby.count('me'), 13, 'timed polls at the pace of next in line');
    assert.equal(lobby.turnWaits.filter((w) => w !== undefined).length, 1, 'none held');
    assert.deepEqual(told.notes, [], 'no busy coordinator said');
    await clock.advance(60_000);
    const held = lobby.turnWaits.filter((w) => w !== undefined).length;
    if (timedFor === Infinity) assert.equal(held, 1, 'an older coordinator: timed polls for the run');
    else assert.ok(held > 1, 'too many held: held again after a while');
    driver.stop(new Error('left'));
    await assert.rejects(run, /left/);
  });
}

/**
 * A real coordinator (`env`) whose first circuit's turn is granted to `aheadName`, and a terminal
 * client signed in as `name` with its FileTurn; both stopped and cleaned up when the test ends.
 */
async function behindAGrantee(t: TestContext, aheadName: string, name: string, env?: ServerEnv) {
  const coordinator = await startTestCoordinator(env ? { env } : {});
  const workDir = await mkdtemp(path.join(tmpdir(), 'contributor-driver-'));
  t.after(async () => {
    await coordinator.close();
    await rm(workDir, { recursive: true, force: true });
  });
  const ahead = new ContributorClient(coordinator.url);
  await ahead.signInDemo(aheadName);
  const ceremony = await ahead.request<CeremonyView>('GET', '/api/ceremony');
  const circuit = ceremony.circuits[0]!.name;
  await ahead.request('POST', '/api/me/join', { circuits: [circuit] });
  coordinator.service.tick();
  assert.equal((await ahead.progress(circuit)).state, 'turn', 'the one ahead holds the turn');
  const client = new CoordinatorClient(coordinator.url, { rideOutRestarts: {} });
  await client.signInDemo(name);
  const protocol = new FileTurn({ client, workDir, transfer: 'delta', workers: 1 });
  /** The terminal's driver options on this client, joined to `circuit` (api and view aside). */
  const terminalOptions = (driver: () => ContributorDriver) => ({
    turn: async (turn: DriverTurn) => {
      const result = await protocol.takeTurn({ ...turn, name, entropy: contributionEntropy, progress: () => {} });
      driver().rememberHash(turn.circuit, result.contributionHash);
    },
    joinAtStart: { circuits: [circuit], everyCircuit: false },
    steady: { signInAgain: async () => void (await client.signInDemo(name)) },
    pollDuringTurns: false,
    confirmLostTurns: true,
    turnRetryPauseMs: 2000,
    ready: protocol.prepare(),
  });
  return { coordinator, ahead, circuit, client, terminalOptions };
}

/** The circuit's progress on the coordinator is accepted, with the hash the driver computed. */
async function assertAcceptedHere(client: CoordinatorClient, driver: ContributorDriver, circuit: string) {
  const me = await client.request<MeView>('GET', '/api/me');
  const progress = me.status.circuits.find((c) => c.circuit === circuit);
  assert.ok(progress?.state === 'accepted', 'accepted on the coordinator');
  assert.equal(progress.contributionHash, driver.localHash(circuit), 'the hash computed here');
}

test('a real coordinator: joined, in line behind another, the turn taken when it leaves, accepted', async (t) => {
  const { coordinator, ahead, circuit, client, terminalOptions } = await behindAGrantee(t, 'ahead', 'driven');
  const verdicts: string[] = [];
  const waiting: number[] = [];
  const driver: ContributorDriver = new ContributorDriver({
    ...terminalOptions(() => driver),
    api: coordinatorApi(client),
    view: {
      answered: (me) => {
        for (const c of me.status.circuits) if (c.state === 'waiting') waiting.push(c.position);
      },
      verdict: (contribution) => verdicts.push(contribution.status),
    },
  });
  const run = driver.run();
  t.after(() => driver.stop());
  for (const started = Date.now(); waiting.length === 0; await new Promise((r) => setTimeout(r, 50)))
    assert.ok(Date.now() - started < 10_000, 'the driver joined and waits in line');
  assert.equal(waiting[0], 1, 'next in line');
  await ahead.request('POST', '/api/me/leave');
  coordinator.service.tick();
  await run;
  assert.deepEqual(verdicts, ['accepted']);
  await assertAcceptedHere(client, driver, circuit);
});

test('a real coordinator: the turn of one who never takes it is taken on standby, held polls and all', async (t) => {
  const env = { TAKE_TURN_MS: '30000', TAKE_PRIORITY_MS: '500', PRESENCE_MS: '60000' };
  const { ahead: idle, circuit, client, terminalOptions } = await behindAGrantee(t, 'never-takes', 'standby', env);
  const api = coordinatorApi(client);
  const turnWaits: number[] = [];
  const started: boolean[] = [];
  const failures: string[] = [];
  const driver: ContributorDriver = new ContributorDriver({
    ...terminalOptions(() => driver),
    api: { ...api, me: (resend, hold) => (hold?.turnWaitMs && turnWaits.push(hold.turnWaitMs), api.me(resend, hold)) },
    holdPollsForVerdicts: true,
    view: {
      turnStarting: (_circuit, standby) => started.push(standby),
      turnFailed: (_circuit, error) => failures.push(error.code),
    },
  });
  t.after(() => driver.stop());
  await driver.run();
  assert.deepEqual(started, [true], 'one turn, taken on standby');
  assert.deepEqual(failures, []);
  assert.ok(turnWaits.length > 0 && turnWaits.every((ms) => ms === 10_000), 'next in line, its polls were held');
  await assertAcceptedHere(client, driver, circuit);
  const idleState = (await idle.progress(circuit)).state;
  assert.ok(
    idleState === 'waiting' || idleState === 'turn',
    `the one who never took it is back in line (${idleState})`,
  );
});
