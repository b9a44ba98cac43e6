/**
 * Queue-log entries of one circuit (`register`) written by hand, before their seq and hash are
 * chained: the rules entry of a short test ceremony and the step of a contributor at a moment.
 */
export const REGISTER_RULES = {
  type: 'rules',
  version: 2,
  circuits: ['register'],
  presenceMs: 0,
  takeTurnMs: 0,
  turnTimeoutMs: 60_000,
  uploadStartMs: 0,
  uploadStallMs: 0,
  maxTurnMs: 60_000,
  cooldownMs: 1000,
  maxMissedTurns: 3,
};

export const iso = (at: number): string => new Date(at).toISOString();

/** `who`'s entry of `type` in register at `at` (ms since the epoch), with the type's own `fields`. */
export function registerStep(type: string, who: string, at: number, fields: Record<string, unknown> = {}) {
  return { type, circuit: 'register', contributor: who, name: who, time: iso(at), ...fields };
}
