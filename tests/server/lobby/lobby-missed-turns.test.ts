/**
 * Turns nobody takes, on a clock the test controls (issue 62): every turn that ends without a
 * contribution is a missed turn, counted for good; an entry that passed its turn on comes back
 * only after the turn it passed on, and not twice; joining again resets nothing; a refusal and an
 * error the upload caused count; heartbeats alone do not hold a turn, nor does an upload that
 * stalls. Every log the lobby writes here passes the audit's replay (check-queue-fairness.ts).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { checkQueueFairness } from '../../../core/audit/check-queue-fairness.ts';
import type { TranscriptEntry } from '../../../core/transcript/transcript.ts';
import { checkQueueLog, type QueueLogEntry } from '../../../core/queue-log/queue-log-entry.ts';
import { UPLOAD_PROGRESS_BYTES, type Lobby, type LobbyOptions } from '../../../server/lobby/lobby.ts';
import { CEREMONY_ID, CIRCUITS, makeLobby, progressOf } from './lobby-helpers.ts';

const SECOND = 1000;
const MINUTE = 60 * SECOND;
/** The production rules, with presence on. */
const RULES: Partial<LobbyOptions> = {
  presenceMs: MINUTE,
  takeTurnMs: 30 * SECOND,
  turnSilenceMs: 2 * MINUTE,
  uploadStartMs: 10 * MINUTE,
  uploadStallMs: 2 * MINUTE,
  cooldownMs: 5 * MINUTE,
  maxMissedTurns: 3,
};
const config = { circuits: CIRCUITS.map((name) => ({ name })) };

/** The lobby's log, checked (shape, chain) and replayed by the audit against `links`, the transcript's. */
function auditedLog(lobby: Lobby, links: TranscriptEntry[] = []): QueueLogEntry[] {
  const log = checkQueueLog(CEREMONY_ID, lobby.queueLog.entries(), 'of the test');
  checkQueueFairness(config, log, links);
  return log;
}

/** The tick's events: alice's turn missed, the circuit granted to bob, next in line. */
function assertAliceMissedBobGranted(events: ReturnType<Lobby['tick']>, message?: string): void {
  assert.deepEqual(
    events.map((e) => [e.type, e.contributorId]),
    [
      ['turn_missed', 'alice'],
      ['turn_granted', 'bob'],
    ],
    message,
  );
}

/**
 * `who`'s turn on register uploaded and accepted as link `index`, and the transcript entry the
 * audit matches the acceptance with (the fields it reads).
 */
function accept(lobby: Lobby, who: string, index: number): TranscriptEntry {
  const hash = index.toString(16).padStart(128, '0');
  lobby.markSubmitted(who, 'register', `${who}-register`);
  lobby.recordVerdict(`${who}-register`, {
    status: 'accepted',
    chainIndex: index,
    contributionHash: hash,
    transcriptHash: hash,
  });
  return { type: 'contribution', hash, circuit: 'register', index, contributor: who } as unknown as TranscriptEntry;
}

/** Not waiting, holding or being verified anywhere: out of the lobby. */
const outOfTheLobby = (lobby: Lobby, who: string) =>
  lobby.status(who).circuits.every((c) => c.state === 'pending' || c.state === 'accepted');

/**
 * The hostile accounts' every move, each second: poll (so they are never away) and join again as
 * soon as they are out; they never take a turn.
 */
function hostileSecond(lobby: Lobby, hostile: readonly string[]): void {
  for (const who of hostile) {
    if (outOfTheLobby(lobby, who)) lobby.join(who);
    lobby.seen(who);
  }
}

test('two accounts that join first and never take their turn cannot hold a circuit (the m1/m2 loop)', () => {
  const { lobby, clock } = makeLobby(RULES);
  lobby.join('m1');
  lobby.join('m2');
  lobby.join('honest');
  const grants: string[] = [];
  const start = clock.now();
  let honestAt: number | undefined;
  // Before the change, grants alternated m1, m2, m1… for as long as this ran (40 in 20 minutes).
  for (let second = 0; second < 20 * 60 && honestAt === undefined; second++) {
    hostileSecond(lobby, ['m1', 'm2']);
    lobby.seen('honest');
    for (const event of lobby.tick()) if (event.type === 'turn_granted') grants.push(event.contributorId);
    if (progressOf(lobby, 'honest', 'register').state === 'turn') honestAt = clock.now();
    clock.advance(SECOND);
  }
  assert.deepEqual(
    grants,
    ['m1', 'm2', 'm1', 'm2', 'honest'],
    'each passes once in its place and once more after the turn it passed on, then goes to the back',
  );
  assert.ok(honestAt !== undefined && honestAt - start <= 4 * 31 * SECOND, `honest waited ${honestAt! - start} ms`);
  const entries = lobby.queueEntries();
  assert.deepEqual(
    entries.map((e) => [e.contributorId, e.missedTurns, e.eligibleAt !== undefined]),
    [
      ['m1', 2, true],
      ['m2', 2, true],
    ],
    'two missed turns each, at the back after the cooldown',
  );
  const log = auditedLog(lobby);
  const lapses = log.flatMap((e) => (e.type === 'lapsed' ? [[e.contributor, e.taken, e.missedTurns]] : []));
  assert.deepEqual(lapses, [
    ['m1', false, 1],
    ['m2', false, 1],
    ['m1', false, 2],
    ['m2', false, 2],
  ]);
});

test('with honest contributors always waiting, two such accounts cost the circuit a few turns in 20 minutes', () => {
  const { lobby, clock } = makeLobby(RULES);
  const hostile = ['m1', 'm2'];
  const honest = Array.from({ length: 12 }, (_, i) => `h${i}`);
  for (const who of [...hostile, ...honest]) lobby.join(who, ['register']);
  const hostileGrants: number[] = [];
  const links: TranscriptEntry[] = [];
  let taken: { who: string; at: number } | undefined;
  for (let second = 0; second < 20 * 60; second++) {
    hostileSecond(lobby, hostile);
    for (const who of honest) {
      if (outOfTheLobby(lobby, who) && progressOf(lobby, who, 'register').state !== 'accepted')
        lobby.join(who, ['register']);
      lobby.seen(who);
    }
    for (const event of lobby.tick()) {
      if (event.type !== 'turn_granted') continue;
      if (hostile.includes(event.contributorId)) hostileGrants.push(clock.now());
      else {
        lobby.takeTurn(event.contributorId, 'register'); // downloads at once, contributes in 60 s
        taken = { who: event.contributorId, at: clock.now() };
      }
    }
    if (taken && clock.now() - taken.at >= MINUTE) {
      links.push(accept(lobby, taken.who, links.length + 1));
      taken = undefined;
    }
    clock.advance(SECOND);
  }
  // m1 and m2 pass twice each at the start, go to the back behind the twelve, and are out at their
  // third miss; joining again waits the cooldown, doubled each time.
  assert.equal(links.length, 12, 'every honest contributor contributed');
  assert.ok(hostileGrants.length <= 8, `${hostileGrants.length} turns went to the accounts that never take them`);
  auditedLog(lobby, links);
});

test('leaving and joining again keeps the missed count; a turn left is missed; a join past the limit waits', () => {
  const { lobby, clock } = makeLobby({ maxMissedTurns: 3, cooldownMs: 5 * MINUTE });
  const missedTurns = () => lobby.queueEntries().find((e) => e.contributorId === 'alice')?.missedTurns;
  lobby.join('alice');
  lobby.tick(); // presence off: taken when granted
  clock.advance(10 * MINUTE + 1);
  lobby.tick(); // its deadline passed: missed
  assert.equal(missedTurns(), 1);
  lobby.leave('alice');
  lobby.join('alice');
  assert.equal(missedTurns(), 1, 'leaving and joining again does not reset the count');
  lobby.tick();
  assert.equal(progressOf(lobby, 'alice', 'register').state, 'turn');
  assert.deepEqual(lobby.leave('alice'), { left: 'turn', circuit: 'register' });
  lobby.join('alice');
  assert.equal(missedTurns(), 2, 'a turn given up is a missed turn');
  lobby.tick();
  lobby.leave('alice');
  const rejoined = progressOf(lobby, 'alice', 'register');
  assert.equal(rejoined.state, 'pending');
  const status = lobby.join('alice').circuits[0]!;
  assert.equal(missedTurns(), 3);
  assert.equal(
    status.state === 'waiting' && status.eligibleAt,
    clock.now() + 5 * MINUTE,
    'at the limit, a join waits the cooldown',
  );
  clock.advance(5 * MINUTE);
  lobby.tick();
  lobby.leave('alice'); // a fourth miss
  const again = lobby.join('alice').circuits[0]!;
  assert.equal(again.state === 'waiting' && again.eligibleAt, clock.now() + 10 * MINUTE, 'doubled past the limit');
  const log = auditedLog(lobby);
  assert.deepEqual(
    log.flatMap((e) => (e.type === 'left' && e.from === 'turn' ? [e.missedTurns] : [])),
    [2, 3, 4],
  );
});

test('a refusal and an error the upload caused are missed turns; a discard and the coordinator’s error are not', () => {
  const fixture = makeLobby({ maxMissedTurns: 3 });
  const { lobby } = fixture;
  const missedTurns = (who: string) => lobby.queueEntries().find((e) => e.contributorId === who)?.missedTurns;
  lobby.join('alice');
  const verdicts = [
    [{ status: 'discarded', code: 'contribution.stale', message: 'no longer fits' }, {}, 0],
    [{ status: 'error', code: 'verification.unavailable', message: 'restart lost it' }, {}, 0],
    [{ status: 'refused', code: 'contribution.invalid_proof_of_knowledge', message: 'no' }, {}, 1],
    [{ status: 'error', code: 'verification.unavailable', message: 'unreadable' }, { errorCausedByUpload: true }, 2],
  ] as const;
  for (const [i, [verdict, options, count]] of verdicts.entries()) {
    lobby.tick();
    lobby.markSubmitted('alice', 'register', `a${i}`);
    lobby.recordVerdict(`a${i}`, verdict, options);
    assert.equal(missedTurns('alice'), count, `${verdict.status} ${verdict.message}`);
  }
  lobby.tick();
  lobby.markSubmitted('alice', 'register', 'a-last');
  lobby.recordVerdict('a-last', { status: 'refused', code: 'contribution.invalid', message: 'no' });
  assert.equal(lobby.status('alice').removed?.reason, 'missed_turns', 'the third: out of the queue');
  assert.equal(progressOf(lobby, 'alice', 'register').state, 'pending');
  const log = auditedLog(lobby);
  assert.deepEqual(
    log.flatMap((e) => (e.type === 'refused' ? [[e.outcome, e.missedTurns]] : [])),
    [
      ['discarded', undefined],
      ['error', undefined],
      ['refused', 1],
      ['error', 2],
      ['refused', 3],
    ],
  );
  assert.equal(log.at(-1)?.type, 'removed');
});

/** alice holds register's turn, taken; bob waits, polling. */
function aliceTookTheTurn() {
  const fixture = makeLobby({ ...RULES, turnSilenceMs: 0 });
  const { lobby, clock } = fixture;
  lobby.join('alice');
  lobby.join('bob');
  lobby.tick();
  lobby.takeTurn('alice', 'register');
  /** `ms` pass, alice's client beating every 30 s (and `also` each time), bob polling. */
  const beating = (ms: number, also: () => void = () => {}) => {
    for (let left = ms; left > 0; left -= 30 * SECOND) {
      clock.advance(Math.min(left, 30 * SECOND));
      lobby.seen('bob');
      lobby.heartbeat('alice', 'register');
      also();
    }
  };
  return { ...fixture, beating, grantedAt: clock.now() };
}

test('heartbeats alone do not hold a turn: none of its upload by UPLOAD_START_MS, it is missed then', () => {
  const { lobby, clock, beating, grantedAt } = aliceTookTheTurn();
  beating(10 * MINUTE);
  assert.equal(lobby.nextDueAt(), grantedAt + 10 * MINUTE + 1, 'the server ticks when the upload is due');
  assert.deepEqual(lobby.tick(), [], 'at UPLOAD_START_MS itself the turn is still hers');
  clock.advance(1);
  const events = lobby.tick();
  assertAliceMissedBobGranted(
    events,
    'missed 10 minutes after the grant, not at MAX_TURN_MS (60 min) however she beats',
  );
  assert.equal(events[0]!.type === 'turn_missed' && events[0]!.uploadDue, grantedAt + 10 * MINUTE);
  const lapse = auditedLog(lobby).find((e) => e.type === 'lapsed');
  assert.ok(lapse?.type === 'lapsed');
  assert.deepEqual(
    [lapse.taken, lapse.missedTurns, lapse.uploadDue],
    [true, 1, new Date(grantedAt + 10 * MINUTE).toISOString()],
  );
});

test('a heartbeat does not take a turn: an account that only beats loses the grant at TAKE_TURN_MS', () => {
  const { lobby, clock } = makeLobby({ ...RULES, turnSilenceMs: 0 });
  lobby.join('alice');
  lobby.join('bob');
  lobby.tick();
  const grantedAt = clock.now();
  const answer = lobby.heartbeat('alice', 'register');
  assert.equal(answer.deadline, grantedAt + 10 * MINUTE, 'answered, its deadline unchanged');
  for (let beat = 0; beat < 3; beat++) {
    clock.advance(10 * SECOND);
    lobby.seen('alice');
    lobby.seen('bob');
    lobby.heartbeat('alice', 'register');
  }
  assert.equal(lobby.nextDueAt(), grantedAt + 30 * SECOND + 1, 'due when its time to be taken runs out');
  clock.advance(1);
  assert.deepEqual(
    lobby.tick().map((e) => [e.type, e.contributorId]),
    [
      ['turn_passed_on', 'alice'],
      ['turn_granted', 'bob'],
    ],
    'passed on 30 s after the grant, not held to UPLOAD_START_MS (10 min) by the beats',
  );
  const lapse = auditedLog(lobby).find((e) => e.type === 'lapsed');
  assert.ok(lapse?.type === 'lapsed');
  assert.deepEqual([lapse.taken, lapse.missedTurns], [false, 1]);
  assert.equal(auditedLog(lobby).filter((e) => e.type === 'taken').length, 0, 'never logged as taken');
});

test('an upload that stalls, or trickles, is missed UPLOAD_STALL_MS after its last progress', () => {
  const { lobby, clock, beating } = aliceTookTheTurn();
  // 30 × 64 KiB: the pace that sends it within MAX_TURN_MS (60 min) is 64 KiB per 2 min, no more.
  const upload = { id: 'u1', size: 30 * UPLOAD_PROGRESS_BYTES, offset: 0 };
  let progressAt = 0;
  // Half of UPLOAD_PROGRESS_BYTES every 30 s, for 20 minutes: progress each minute, the turn lives
  // on past UPLOAD_START_MS (the server ticks all along).
  beating(20 * MINUTE, () => {
    upload.offset += UPLOAD_PROGRESS_BYTES / 2;
    lobby.uploadProgress('alice', 'register', upload);
    if (upload.offset % UPLOAD_PROGRESS_BYTES === 0) progressAt = clock.now();
    lobby.tick();
  });
  assert.equal(progressOf(lobby, 'alice', 'register').state, 'turn', 'an upload that progresses holds the turn');
  // Now a trickle: a byte every 30 s is no progress.
  beating(2 * MINUTE, () => {
    lobby.uploadProgress('alice', 'register', { ...upload, offset: ++upload.offset });
    lobby.tick();
  });
  assert.equal(progressOf(lobby, 'alice', 'register').state, 'turn');
  assert.equal(lobby.nextDueAt(), progressAt + 2 * MINUTE + 1);
  clock.advance(1);
  const events = lobby.tick();
  assertAliceMissedBobGranted(events);
  const lapse = auditedLog(lobby).find((e) => e.type === 'lapsed');
  assert.ok(lapse?.type === 'lapsed');
  assert.equal(lapse.uploadStalledSince, new Date(progressAt).toISOString());
});

test('a large upload must keep the pace that sends it within MAX_TURN_MS: 64 KiB a period is a trickle', () => {
  const { lobby, clock, beating } = aliceTookTheTurn();
  // A 141 MB key: 141e6 × 2 min / 60 min = 4.7 MB a period.
  const size = 141e6;
  const pace = Math.ceil(size / 30);
  lobby.uploadProgress('alice', 'register', { id: 'u1', size, offset: pace });
  const started = clock.now();
  assert.equal(lobby.nextDueAt(), started + 2 * MINUTE + 1, 'the pace: progress');
  // Then 64 KiB every 30 s, each on a new upload as well as the same one: never the pace.
  let offset = pace;
  let uploads = 1;
  beating(2 * MINUTE, () => {
    offset += UPLOAD_PROGRESS_BYTES;
    lobby.uploadProgress('alice', 'register', { id: 'u1', size, offset });
    lobby.uploadProgress('alice', 'register', { id: `u${++uploads}`, size, offset: UPLOAD_PROGRESS_BYTES });
  });
  assert.equal(lobby.nextDueAt(), started + 2 * MINUTE + 1, 'a trickle is no progress');
  clock.advance(1);
  assertAliceMissedBobGranted(lobby.tick());
});

test('the last bytes of an upload count as progress however few; another upload starts from 0', () => {
  const { lobby, clock, beating } = aliceTookTheTurn();
  const grantedAt = clock.now();
  lobby.uploadProgress('alice', 'register', { id: 'u1', size: 100, offset: 99 });
  assert.equal(lobby.nextDueAt(), grantedAt + 10 * MINUTE + 1, '99 of 100 bytes: not yet progress');
  beating(MINUTE);
  lobby.uploadProgress('alice', 'register', { id: 'u1', size: 100, offset: 100 });
  const last = clock.now();
  assert.equal(lobby.nextDueAt(), last + 2 * MINUTE + 1, 'its last byte: progress');
  // A new upload (the page lost the old one's URL) makes progress from its own 0.
  const u2 = { id: 'u2', size: 10 * UPLOAD_PROGRESS_BYTES };
  beating(30 * SECOND, () => lobby.uploadProgress('alice', 'register', { ...u2, offset: UPLOAD_PROGRESS_BYTES - 1 }));
  assert.equal(lobby.nextDueAt(), last + 2 * MINUTE + 1);
  lobby.uploadProgress('alice', 'register', { ...u2, offset: UPLOAD_PROGRESS_BYTES });
  assert.equal(lobby.nextDueAt(), clock.now() + 2 * MINUTE + 1);
});
