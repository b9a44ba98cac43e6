/**
 * A lobby's options resolved: the defaults filled in and every value checked once, when the lobby
 * is built, so that a misconfigured lobby refuses to start rather than misbehave on its first turn.
 */
import { CoordinatorError } from '../../core/errors.ts';
import { LOBBY_DEFAULTS, type LobbyOptions, type ResolvedLobbyOptions } from './lobby-types.ts';

export function resolveOptions(options: LobbyOptions): ResolvedLobbyOptions {
  const given = {
    ...LOBBY_DEFAULTS,
    ...Object.fromEntries(Object.entries(options).filter(([, v]) => v !== undefined)),
  };
  const resolved: ResolvedLobbyOptions = {
    ...given,
    standbyStepMs: options.standbyStepMs ?? given.takePriorityMs,
    circuits: [...options.circuits],
    ceremonyId: options.ceremonyId,
    isOpen: options.isOpen,
  } as ResolvedLobbyOptions;
  if (resolved.circuits.length === 0 || new Set(resolved.circuits).size !== resolved.circuits.length) {
    throw new CoordinatorError('config.invalid', 'lobby circuits must be a non-empty list of distinct names');
  }
  if (!Number.isInteger(resolved.maxMissedTurns) || resolved.maxMissedTurns < 1) {
    throw new CoordinatorError('config.invalid', 'lobby maxMissedTurns must be a positive whole number');
  }
  if (typeof resolved.ceremonyId !== 'string' || resolved.ceremonyId === '')
    throw new CoordinatorError('config.invalid', 'the lobby needs the ceremony id (its queue log is bound to it)');
  for (const key of [
    'presenceMs',
    'takeTurnMs',
    'takePriorityMs',
    'turnTimeoutMs',
    'turnSilenceMs',
    'disconnectGraceMs',
    'uploadStartMs',
    'uploadStallMs',
    'heartbeatExtensionMs',
    'maxTurnMs',
    'cooldownMs',
    'defaultTurnEstimateMs',
  ] as const) {
    if (!Number.isFinite(resolved[key]) || resolved[key] < 0)
      throw new CoordinatorError('config.invalid', `lobby ${key} must be a non-negative number of milliseconds`);
  }
  const { takePriorityMs, standbyStepMs } = resolved;
  if (takePriorityMs > 0 && !(Number.isInteger(standbyStepMs) && standbyStepMs >= 1 && standbyStepMs <= takePriorityMs))
    throw new CoordinatorError(
      'config.invalid',
      'lobby standbyStepMs must be a whole number of ms from 1 to takePriorityMs',
    );
  return Object.freeze(resolved);
}
