/**
 * The lobby's settings: how long a turn lasts and what ends it, presence, cooldowns. Their defaults
 * are written here only; LOBBY_DEFAULTS (lobby-types.ts), what a lobby built without them uses,
 * derives from these.
 */
import { z } from 'zod';
import { CoordinatorError } from '../../core/errors.ts';
import {
  countSetting,
  declareSettings,
  durationMsSetting,
  offOrMsSetting,
  settingsFragment,
  type SettingsValues,
} from '../config/setting.ts';

/**
 * Standby's step when STANDBY_STEP_MS is unset: a quarter of TAKE_PRIORITY_MS's default, within the
 * round trip an honest client holding its poll needs (turn-order.ts says why).
 */
const DEFAULT_STANDBY_STEP_MS = 1250;

const LOBBY_SETTINGS_DECLARED = declareSettings({
  PRESENCE_MS: {
    group: 'turns',
    schema: offOrMsSetting(60_000),
    doc: "a waiting entry not seen (its client's polls) for this long is passed over, its place kept; 0: off",
  },
  TAKE_TURN_MS: {
    group: 'turns',
    schema: offOrMsSetting(30_000),
    doc:
      'a granted turn not taken (its first download or upload; a heartbeat does not take it) within this passes ' +
      'on, a missed turn; 0: off',
  },
  TAKE_PRIORITY_MS: {
    group: 'turns',
    schema: offOrMsSetting(5_000),
    doc:
      "a granted turn is its grantee's alone this long; then, until taken or TAKE_TURN_MS, the entry next in line " +
      'may take it too, and one more every further STANDBY_STEP_MS (standby): an unwanted turn costs this, not ' +
      'TAKE_TURN_MS, while someone behind is ready; 0: off',
  },
  STANDBY_STEP_MS: {
    group: 'turns',
    schema: z.coerce.number().int().nonnegative().optional(),
    doc:
      'after TAKE_PRIORITY_MS, an untaken turn is offered to one more entry every this long: each entry ahead ' +
      'of a ready one that lets it pass costs this; from 1 ms to TAKE_PRIORITY_MS',
    unset: `${DEFAULT_STANDBY_STEP_MS / 1000} s, or TAKE_PRIORITY_MS if shorter`,
  },
  TURN_TIMEOUT_MS: {
    group: 'turns',
    schema: durationMsSetting(10 * 60_000),
    doc: 'how long a turn lasts; each heartbeat extends it by HEARTBEAT_EXTENSION_MS, never past MAX_TURN_MS',
  },
  TURN_SILENCE_MS: {
    group: 'turns',
    schema: offOrMsSetting(2 * 60_000),
    doc: 'a taken turn whose client sends nothing (heartbeat, download, upload) for this long is missed; 0: off',
  },
  DISCONNECT_GRACE_MS: {
    group: 'turns',
    schema: offOrMsSetting(10_000),
    doc:
      'a contributor whose presence stream closed and who is not seen again within this is passed over (place ' +
      'kept), and a turn granted and not yet taken passes on; 0: a closed stream means nothing',
  },
  UPLOAD_START_MS: {
    group: 'turns',
    schema: offOrMsSetting(10 * 60_000),
    doc:
      'a taken turn none of whose upload arrived within this of its grant is missed (heartbeats alone do not hold ' +
      "a turn): it must cover the slowest machine's whole-key contribution; 0: off",
  },
  UPLOAD_STALL_MS: {
    group: 'turns',
    schema: offOrMsSetting(2 * 60_000),
    doc:
      'a taken turn whose upload, once started, gains less than 64 KiB, or than the pace that ends it within ' +
      'MAX_TURN_MS if more, for this long is missed; 0: off',
  },
  // Served by routes/presence-stream.ts, declared here to keep its place among the turns' settings.
  MAX_PRESENCE_STREAMS: {
    group: 'turns',
    schema: z.coerce.number().int().nonnegative().optional(),
    doc:
      'presence streams (GET /api/me/presence) open at once, each a file descriptor; beyond it, clients keep their ' +
      'place by polling',
    unset: 'half the connections the soft limit of open files allows at start, at most 10 000 (docs/security.md)',
  },
  HEARTBEAT_EXTENSION_MS: {
    group: 'turns',
    schema: durationMsSetting(2 * 60_000),
    doc: "how far each heartbeat pushes a turn's deadline",
  },
  MAX_TURN_MS: {
    group: 'turns',
    schema: durationMsSetting(60 * 60_000),
    doc: 'the longest a turn may last from its start, heartbeats included',
  },
  COOLDOWN_MS: {
    group: 'turns',
    schema: durationMsSetting(5 * 60_000),
    doc:
      'an entry a missed turn sends to the back of the queue (a refusal aside) is eligible again after this; a ' +
      'join past MAX_MISSED_TURNS waits it, doubled per miss beyond',
  },
  MAX_MISSED_TURNS: {
    group: 'turns',
    schema: countSetting(3),
    doc:
      'missed turns in one circuit (every turn ended without a contribution, never reset) after which the entry ' +
      'leaves the queue (the contributor sees why)',
  },
});

type LobbySettingsValues = SettingsValues<typeof LOBBY_SETTINGS_DECLARED>;

/**
 * Standby's step: as set, checked against TAKE_PRIORITY_MS when standby is on (a step longer than
 * the priority is not the rule the log states), or the default; unset, it never exceeds the
 * priority, so a TAKE_PRIORITY_MS under 1.25 s set before the step existed keeps starting.
 */
function standbyStepMs(e: LobbySettingsValues): number {
  const step = e.STANDBY_STEP_MS;
  if (step === undefined) return Math.min(DEFAULT_STANDBY_STEP_MS, e.TAKE_PRIORITY_MS);
  if (e.TAKE_PRIORITY_MS > 0 && !(step >= 1 && step <= e.TAKE_PRIORITY_MS))
    throw new CoordinatorError(
      'config.invalid',
      `server configuration: STANDBY_STEP_MS: must be from 1 to TAKE_PRIORITY_MS (${e.TAKE_PRIORITY_MS}) while ` +
        'standby is on',
    );
  return step;
}

/** The lobby's options (LobbyOptions) the settings give. */
export function lobbyTimings(e: LobbySettingsValues) {
  return {
    presenceMs: e.PRESENCE_MS,
    takeTurnMs: e.TAKE_TURN_MS,
    takePriorityMs: e.TAKE_PRIORITY_MS,
    standbyStepMs: standbyStepMs(e),
    turnTimeoutMs: e.TURN_TIMEOUT_MS,
    turnSilenceMs: e.TURN_SILENCE_MS,
    disconnectGraceMs: e.DISCONNECT_GRACE_MS,
    uploadStartMs: e.UPLOAD_START_MS,
    uploadStallMs: e.UPLOAD_STALL_MS,
    heartbeatExtensionMs: e.HEARTBEAT_EXTENSION_MS,
    maxTurnMs: e.MAX_TURN_MS,
    cooldownMs: e.COOLDOWN_MS,
    maxMissedTurns: e.MAX_MISSED_TURNS,
  };
}

export const LOBBY_SETTINGS = settingsFragment(LOBBY_SETTINGS_DECLARED, (e, { descriptors }) => ({
  lobby: Object.freeze(lobbyTimings(e)),
  /** GET /api/me/presence: streams open at once. */
  maxPresenceStreams: e.MAX_PRESENCE_STREAMS ?? descriptors.maxPresenceStreams,
}));
