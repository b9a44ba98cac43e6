/**
 * A lobby on an in-memory (or given) database with a clock the test moves, and a few shorthands.
 * Presence is off unless a test turns it on (`presenceMs`, `takeTurnMs`, `turnSilenceMs`): the tests of FIFO order,
 * cooldowns and missed turns take every turn as taken when granted, as a client that is there
 * does at once (lobby-presence.test.ts covers presence).
 */
import assert from 'node:assert/strict';
import { isCoordinatorError, type ErrorCode } from '../../../core/errors.ts';
import { ManualClock } from '../../../server/clock.ts';
import { Lobby, type CircuitProgress, type LobbyOptions } from '../../../server/lobby/lobby.ts';
import { openDatabase, type Db } from '../../../server/store/database.ts';
import type { SettledVerdict } from '../../../server/contributions/contribution-lifecycle.ts';

export const MINUTE = 60_000;
export const CIRCUITS = ['register', 'transact2', 'transact21'] as const;
export const CEREMONY_ID = 'lobby-test';
/** The transcript entry hash an accepted verdict names (the lobby only logs it). */
export const TRANSCRIPT_HASH = 'ab'.repeat(64);

export interface LobbyFixture {
  lobby: Lobby;
  clock: ManualClock;
  db: Db;
  open: { value: boolean };
}

export function makeLobby(
  overrides: Partial<LobbyOptions> = {},
  db: Db = openDatabase(':memory:'),
  clock = new ManualClock(),
): LobbyFixture {
  const open = { value: true };
  const lobby = new Lobby(
    db,
    {
      circuits: CIRCUITS,
      ceremonyId: CEREMONY_ID,
      turnTimeoutMs: 10 * MINUTE,
      heartbeatExtensionMs: 2 * MINUTE,
      maxTurnMs: 60 * MINUTE,
      cooldownMs: 5 * MINUTE,
      defaultTurnEstimateMs: 3 * MINUTE,
      presenceMs: 0,
      takeTurnMs: 0,
      turnSilenceMs: 0,
      disconnectGraceMs: 0,
      isOpen: () => open.value,
      ...overrides,
    },
    clock,
  );
  return { lobby, clock, db, open };
}

export function progressOf(lobby: Lobby, contributorId: string, circuit: string): CircuitProgress {
  const progress = lobby.status(contributorId).circuits.find((entry) => entry.circuit === circuit);
  assert.ok(progress, `no progress for ${circuit}`);
  return progress;
}

export function positionOf(lobby: Lobby, contributorId: string, circuit: string): number | undefined {
  const progress = progressOf(lobby, contributorId, circuit);
  return progress.state === 'waiting' ? progress.position : undefined;
}

export function assertRefused(action: () => unknown, code: ErrorCode, message?: RegExp): void {
  assert.throws(action, (error: unknown) => {
    assert.ok(isCoordinatorError(error, code), `expected ${code}, got ${String(error)}`);
    if (message) assert.match(error.message, message);
    return true;
  });
}

/** The verdict of an accepted contribution, link `chainIndex` of its chain (its transcript entry: TRANSCRIPT_HASH). */
export function acceptedVerdict(contributionHash: string, chainIndex = 1): SettledVerdict {
  return { status: 'accepted', chainIndex, contributionHash, transcriptHash: TRANSCRIPT_HASH };
}

/** Takes the contributor's live turn through upload and an accepted verification. */
export function contributeAccepted(
  fixture: LobbyFixture,
  contributorId: string,
  circuit: string,
  index: number,
): string {
  const contributionId = `${contributorId}-${circuit}-${index}`;
  fixture.lobby.markSubmitted(contributorId, circuit, contributionId);
  fixture.lobby.recordVerdict(contributionId, acceptedVerdict(`hash-${contributionId}`, index));
  return contributionId;
}
