/** The lobby's own rules as pure functions: plain inputs, plain answers, no database and no clock. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  awayCause,
  goneSince,
  grantedTurn,
  heartbeatDeadline,
  heartbeatEveryMs,
  isPassedOver,
  isProgress,
  keepsCircuit,
  lapseOfTakenTurn,
  lastHeard,
  mayTake,
  nextCircuit,
  progressStep,
  shownTakeBy,
  takeBy,
  turnDueAt,
  turnOver,
  UPLOAD_PROGRESS_BYTES,
  uploadDueAt,
  verdictEvent,
  verdictMiss,
  type LobbyRules,
  type TurnTimes,
} from '../../server/lobby/lobby-rules.ts';

const SECOND = 1000;
const MINUTE = 60 * SECOND;
const T0 = Date.UTC(2026, 6, 1);

/** The defaults of LOBBY_DEFAULTS, written out so a change there does not move these answers. */
const RULES: LobbyRules = {
  presenceMs: MINUTE,
  takeTurnMs: 30 * SECOND,
  takePriorityMs: 5 * SECOND,
  turnTimeoutMs: 10 * MINUTE,
  turnSilenceMs: 2 * MINUTE,
  disconnectGraceMs: 10 * SECOND,
  uploadStartMs: 10 * MINUTE,
  uploadStallMs: 2 * MINUTE,
  heartbeatExtensionMs: 2 * MINUTE,
  maxTurnMs: 60 * MINUTE,
};

const untaken: TurnTimes = { startedAt: T0, deadline: T0 + 10 * MINUTE, takenAt: null };
const taken: TurnTimes = { startedAt: T0, deadline: T0 + 10 * MINUTE, takenAt: T0 + 5 * SECOND };

test('a closed stream makes its contributor gone only once the grace is strictly past', () => {
  assert.equal(goneSince(undefined, T0 + MINUTE, RULES), undefined);
  assert.equal(goneSince(T0, T0 + 10 * SECOND, RULES), undefined, 'at the end of the grace: not yet');
  assert.equal(goneSince(T0, T0 + 10 * SECOND + 1, RULES), T0);
  assert.equal(goneSince(T0, T0 + 1, { ...RULES, disconnectGraceMs: 0 }), T0, 'no grace: gone the ms after');
});

test('a waiting entry is passed over when unseen for presenceMs or gone since its stream closed', () => {
  assert.equal(isPassedOver(T0, undefined, T0 + MINUTE, RULES), false, 'at presenceMs itself: present');
  assert.equal(isPassedOver(T0, undefined, T0 + MINUTE + 1, RULES), true);
  assert.equal(isPassedOver(undefined, undefined, T0 + 99 * MINUTE, RULES), false, 'never seen: seen now');
  assert.equal(isPassedOver(T0, undefined, T0 + 99 * MINUTE, { ...RULES, presenceMs: 0 }), false, 'presence off');
  assert.equal(isPassedOver(T0, T0 + SECOND, T0 + 12 * SECOND, RULES), true, 'gone, though seen lately');
});

test('an away step names the closed stream only when the close, not the silence, made the entry away', () => {
  assert.deepEqual(awayCause(T0, T0, T0 + 11 * SECOND, RULES), { seenAt: T0, disconnectedAt: T0 });
  assert.deepEqual(awayCause(T0, T0 + 30 * SECOND, T0 + 2 * MINUTE, RULES), { seenAt: T0 });
  assert.deepEqual(awayCause(undefined, undefined, T0, RULES), { seenAt: T0 });
});

test('a granted turn: its deadline capped by maxTurnMs, and taken at once when there is no time to take it', () => {
  assert.deepEqual(grantedTurn(T0, RULES), { deadline: T0 + 10 * MINUTE, takenAt: null, takeBy: T0 + 30 * SECOND });
  assert.deepEqual(grantedTurn(T0, { ...RULES, takeTurnMs: 0 }), { deadline: T0 + 10 * MINUTE, takenAt: T0 });
  assert.deepEqual(grantedTurn(T0, { ...RULES, turnTimeoutMs: 90 * MINUTE }).deadline, T0 + 60 * MINUTE);
});

test('a turn may be taken until its time to be taken, and the time shown is never past the deadline', () => {
  assert.equal(takeBy(untaken, RULES), T0 + 30 * SECOND);
  assert.equal(mayTake(untaken, T0 + 30 * SECOND, RULES), true);
  assert.equal(mayTake(untaken, T0 + 30 * SECOND + 1, RULES), false);
  assert.equal(mayTake(taken, T0 + 9 * MINUTE, RULES), true, 'taken already');
  assert.equal(shownTakeBy(untaken, RULES), T0 + 30 * SECOND);
  assert.equal(shownTakeBy({ ...untaken, deadline: T0 + 10 * SECOND }, RULES), T0 + 10 * SECOND);
});

test('a turn is over once its deadline is past, or untaken past its time to be taken', () => {
  assert.equal(turnOver(untaken, T0 + 30 * SECOND, RULES), undefined);
  assert.equal(turnOver(untaken, T0 + 30 * SECOND + 1, RULES), 'not_taken');
  assert.equal(turnOver(taken, T0 + 10 * MINUTE, RULES), undefined, 'at the deadline itself: live');
  assert.equal(turnOver(taken, T0 + 10 * MINUTE + 1, RULES), 'expired');
  assert.equal(turnOver(untaken, T0 + 10 * MINUTE + 1, RULES), 'expired', 'the deadline is said first');
});

test('a heartbeat extends the deadline to heartbeatExtensionMs from now, never back, never past maxTurnMs', () => {
  assert.equal(heartbeatDeadline(taken, T0 + 9 * MINUTE, RULES), T0 + 11 * MINUTE);
  assert.equal(heartbeatDeadline(taken, T0 + MINUTE, RULES), T0 + 10 * MINUTE);
  assert.equal(heartbeatDeadline(taken, T0 + 59 * MINUTE, RULES), T0 + 60 * MINUTE);
});

test('clients beat a quarter of the silence period, within 0.5 s and 30 s', () => {
  assert.equal(heartbeatEveryMs(RULES), 30 * SECOND);
  assert.equal(heartbeatEveryMs({ ...RULES, turnSilenceMs: 40 * SECOND }), 10 * SECOND);
  assert.equal(heartbeatEveryMs({ ...RULES, turnSilenceMs: 0, heartbeatExtensionMs: 60 * SECOND }), 15 * SECOND);
  assert.equal(heartbeatEveryMs({ ...RULES, turnSilenceMs: 1 * SECOND }), 500);
});

test("a taken turn's client was last heard when heard, else when it took the turn", () => {
  assert.equal(lastHeard(T0 + MINUTE, taken), T0 + MINUTE);
  assert.equal(lastHeard(undefined, taken), T0 + 5 * SECOND);
  assert.equal(lastHeard(undefined, untaken), T0);
});

test('an upload progresses by 64 KiB, or by the pace that fits the whole upload in maxTurnMs when that is more', () => {
  assert.equal(progressStep(undefined, RULES), UPLOAD_PROGRESS_BYTES);
  assert.equal(progressStep(1_000_000, RULES), UPLOAD_PROGRESS_BYTES);
  assert.equal(progressStep(141_000_000, RULES), 4_700_000);
  assert.equal(progressStep(141_000_000, { ...RULES, uploadStallMs: 0 }), UPLOAD_PROGRESS_BYTES);
});

test('progress: the step gained since the last progress of the same upload, or its end; a new upload from 0', () => {
  const last = { uploadId: 'u1', offset: 100_000, at: T0 };
  const step = UPLOAD_PROGRESS_BYTES;
  assert.equal(isProgress(last, { id: 'u1', offset: 100_000 + step - 1 }, RULES), false);
  assert.equal(isProgress(last, { id: 'u1', offset: 100_000 + step }, RULES), true);
  assert.equal(isProgress(last, { id: 'u1', offset: 100_010, size: 100_010 }, RULES), true, 'its end');
  assert.equal(isProgress(last, { id: 'u1', offset: 100_000, size: 100_000 }, RULES), false, 'nothing gained');
  assert.equal(isProgress(last, { id: 'u2', offset: step }, RULES), true, 'a new upload counts from 0');
  assert.equal(isProgress(undefined, { id: 'u1', offset: step - 1 }, RULES), false);
});

test('an upload is due uploadStartMs after the grant, then uploadStallMs after each progress; 0 turns each off', () => {
  const progress = { uploadId: 'u1', offset: 1, at: T0 + 3 * MINUTE };
  assert.equal(uploadDueAt(taken, undefined, RULES), T0 + 10 * MINUTE);
  assert.equal(uploadDueAt(taken, progress, RULES), T0 + 5 * MINUTE);
  assert.equal(uploadDueAt(taken, undefined, { ...RULES, uploadStartMs: 0 }), undefined);
  assert.equal(uploadDueAt(taken, progress, { ...RULES, uploadStallMs: 0 }), undefined);
});

test('a taken turn lapses when its client is silent, else when its upload does not start or stalls', () => {
  const heard = T0 + MINUTE;
  assert.equal(lapseOfTakenTurn(taken, heard, undefined, T0 + 3 * MINUTE, RULES), undefined);
  assert.deepEqual(lapseOfTakenTurn(taken, heard, undefined, T0 + 3 * MINUTE + 1, RULES), { silentSince: heard });
  const later = T0 + 10 * MINUTE + 1;
  assert.deepEqual(lapseOfTakenTurn(taken, later, undefined, later, RULES), { uploadDue: T0 + 10 * MINUTE });
  const progress = { uploadId: 'u1', offset: 1, at: T0 + 4 * MINUTE };
  assert.equal(lapseOfTakenTurn(taken, T0 + 6 * MINUTE, progress, T0 + 6 * MINUTE, RULES), undefined);
  assert.deepEqual(lapseOfTakenTurn(taken, T0 + 6 * MINUTE, progress, T0 + 6 * MINUTE + 1, RULES), {
    uploadStalledSince: T0 + 4 * MINUTE,
  });
  const silenceOff = { ...RULES, turnSilenceMs: 0, uploadStartMs: 0 };
  assert.equal(lapseOfTakenTurn(taken, heard, undefined, T0 + 9 * MINUTE, silenceOff), undefined);
});

test("a turn is due the millisecond after the first of its rules' times", () => {
  const none = { heard: T0, progress: undefined, closedAt: undefined };
  assert.equal(turnDueAt(untaken, none, RULES), T0 + 30 * SECOND + 1, 'its time to be taken');
  assert.equal(turnDueAt(untaken, { ...none, closedAt: T0 + 5 * SECOND }, RULES), T0 + 15 * SECOND + 1);
  assert.equal(turnDueAt(untaken, none, { ...RULES, takeTurnMs: 0 }), T0 + 10 * MINUTE + 1, 'its deadline');
  assert.equal(turnDueAt(taken, { ...none, heard: T0 + MINUTE }, RULES), T0 + 3 * MINUTE + 1, 'its silence');
  const quiet = { ...RULES, turnSilenceMs: 0, uploadStartMs: 5 * MINUTE };
  assert.equal(turnDueAt(taken, none, quiet), T0 + 5 * MINUTE + 1, 'its upload due');
  const progress = { uploadId: 'u1', offset: 1, at: T0 + MINUTE };
  assert.equal(turnDueAt(taken, { ...none, progress }, quiet), T0 + 3 * MINUTE + 1, 'its upload stalled');
});

test('a refusal, and an error the upload caused, is a missed turn; a discard or an error of our own is not', () => {
  assert.equal(verdictMiss('refused', false), 'refused');
  assert.equal(verdictMiss('error', true), 'refused');
  assert.equal(verdictMiss('error', false), undefined);
  assert.equal(verdictMiss('discarded', true), undefined);
  assert.equal(verdictMiss('accepted', true), undefined);
});

test('each verdict is the life-cycle event of its name', () => {
  assert.deepEqual((['accepted', 'refused', 'discarded', 'error'] as const).map(verdictEvent), [
    'committed',
    'refused',
    'not_committed',
    'unverifiable',
  ]);
});

test('a contributor queues next for the first circuit, in ceremony order, chosen and not accepted', () => {
  const circuits = ['register', 'vote', 'tally'];
  assert.equal(nextCircuit(circuits, new Set(), undefined), 'register');
  assert.equal(nextCircuit(circuits, new Set(['register']), undefined), 'vote');
  assert.equal(nextCircuit(circuits, new Set(['register']), ['tally']), 'tally');
  assert.equal(nextCircuit(circuits, new Set(['tally']), ['tally']), undefined);
  assert.equal(keepsCircuit(undefined, 'vote'), true, 'no choice keeps every circuit');
  assert.equal(keepsCircuit(['tally'], 'vote'), false);
  assert.equal(keepsCircuit(['vote'], 'vote'), true);
});
