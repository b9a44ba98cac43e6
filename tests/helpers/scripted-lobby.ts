/**
 * The contributor driver (client/contributor-driver.ts) on a clock the test moves by hand, against
 * its own api interface answered by a scripted lobby of one circuit: what a real coordinator would
 * take minutes of waiting to show (turn deadlines, paced polls, a restart) takes no time.
 */
import assert from 'node:assert/strict';
import { ContributorDriver } from '../../client/contributor-driver.ts';
import type {
  DriverApi,
  DriverClock,
  DriverOptions,
  DriverTurn,
  HeldPoll,
  TurnFailure,
} from '../../client/contributor-driver-parts.ts';
import type { ApiError } from '../../client/api-client.ts';
import type {
  CeremonyView,
  CircuitProgress,
  ContributionView,
  MeView,
  TurnHeartbeat,
} from '../../core/coordinator-api/api-types.ts';

const settle = async (): Promise<void> => {
  for (let i = 0; i < 5; i++) await new Promise((resolve) => setImmediate(resolve));
};

/** Timers fired in order as the test moves the time. */
export class ManualClock implements DriverClock {
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
export class ScriptedLobby implements DriverApi {
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

  /** The place a join puts this entry in. */
  joinedAt = 2;

  join(): Promise<MeView> {
    this.requests.push('join');
    if (this.progress.state === 'pending') this.wait(this.joinedAt);
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

  /** While set, `GET /api/ceremony` is answered only once it settles (a slow link: the view's body). */
  ceremonyAnswered: Promise<void> | undefined;

  async ceremony(): Promise<CeremonyView> {
    this.requests.push('ceremony');
    await this.ceremonyAnswered;
    return { circuits: [{ name: 'c1', headIndex: 0, headHash: null }] } as unknown as CeremonyView;
  }

  take(): Promise<void> {
    this.requests.push('take');
    return Promise.resolve();
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

export interface Told {
  verdicts: Array<[string, number]>;
  failures: TurnFailure[];
  /** Turns started, and whether on standby. */
  started: boolean[];
  /** Standby turns another entry took first. */
  elsewhere: number;
  dropped: number;
  unanswered: number;
  notes: string[];
  /** The circuit's state in each answer (state@position while waiting). */
  seen: string[];
}

export function driverFor(clock: ManualClock, lobby: ScriptedLobby, side: 'terminal' | 'page') {
  const { turn, taken } = heldTurns();
  const told: Told = {
    verdicts: [],
    failures: [],
    started: [],
    elsewhere: 0,
    dropped: 0,
    unanswered: 0,
    notes: [],
    seen: [],
  };
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
      answered: (me) => {
        const c = me.status.circuits[0]!;
        told.seen.push(c.state === 'waiting' ? `waiting@${c.position}` : c.state);
      },
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
/** A driver for `side` whose first poll finds its turn granted, once it took it (the page's run caught). */
export async function takingTheFirstTurn(side: 'terminal' | 'page') {
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
