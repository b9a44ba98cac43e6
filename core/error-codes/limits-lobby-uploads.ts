/**
 * The coordinator's limits (rates, downloads, sign-ins and streams at once), its lobby, contribution
 * uploads and their verification.
 */
import { type ErrorEntry, OPERATOR, RERUN, RETRY_TURN, RETRY_TURN_TERMINAL } from './error-entry.ts';

export const LIMIT_LOBBY_UPLOAD_CODES = {
  'rate.limited': {
    kind: 'limit',
    what: 'Too many attempts in a short time.',
    next: 'Wait a moment (the answer says how long) and try again.',
  },
  /** GET /api/ceremony and /api/transcript: too many whole answers to this address in the window. */
  'rate.ceremony_reads': {
    kind: 'limit',
    what: 'The ceremony was read too often from this address.',
    next: 'Wait a moment (the answer says how long); pages open on it elsewhere on your network count too.',
  },
  /** PATCH and HEAD of contribution uploads: too many by this contributor in the window (RATE_LIMIT_UPLOAD_REQUESTS) */
  'rate.upload_requests': {
    kind: 'limit',
    what: 'Your upload sent too many requests in a short time.',
    next: 'Wait a moment (the answer says how long); the upload resumes from where it stopped.',
  },
  /** GET /api/me, presence streams opened, heartbeats: too many from this contributor in the window. */
  'rate.contributor_requests': {
    kind: 'limit',
    what: 'Your account asked the coordinator for news too often.',
    next:
      'Nothing to do: the page asks again after a pause (the answer says how long); ' +
      'close extra tabs if you have several open.',
    nextInTerminal: 'Nothing to do: the command asks again after a pause; stop any other copy of it you left running.',
  },
  /** GET /api/me/receipts: too many from this contributor in the window. */
  'rate.receipt_reads': {
    kind: 'limit',
    what: 'Your receipts were asked for too often.',
    next: 'Wait a moment (the answer says how long) and try again.',
  },
  /** File downloads in progress at once: this address (or a turn's holder) has as many as it may. */
  'download.too_many_in_progress': {
    kind: 'limit',
    what: 'Too many downloads from the coordinator are in progress from your network (or for your turn) at once.',
    next: 'Wait for one to finish (the answer says how long to wait) and try again.',
  },
  /** File downloads in progress at once: the coordinator serves as many as its file descriptors allow. */
  'download.server_busy': {
    kind: 'unavailable',
    what: 'The coordinator is serving as many downloads as it can at once.',
    next: 'Try again in a moment (the answer says when), or download from the ceremony’s mirror.',
  },
  /** Sign-ins started from one client address and not finished (GitHub states, Semaphore challenges) at most. */
  'auth.too_many_in_progress': {
    kind: 'limit',
    what: 'Too many sign-ins were started from your network and not finished.',
    next: 'Finish one, or wait a few minutes (the answer says how long) and try again.',
  },
  /**
   * POST /auth/semaphore: the coordinator verifies as many proofs at once as SEMAPHORE_MAX_PROOF_CHECKS allows;
   * refused before the challenge is spent, so the same proof may be sent again.
   */
  'auth.proof_checks_busy': {
    kind: 'unavailable',
    what: 'The coordinator is checking as many membership proofs as it can at once.',
    next: 'Sign in again in a moment (the answer says when).',
  },
  'lobby.already_contributed': {
    kind: 'conflict',
    what: 'You have already contributed to this circuit.',
    next: 'Nothing to do: your contribution counts.',
  },
  'lobby.not_your_turn': {
    kind: 'conflict',
    what: 'It is not your turn on this circuit (your turn may have ended).',
    next: 'You stay in the queue; this page contributes when your turn comes.',
    nextInTerminal: 'You stay in the queue; this command contributes when your turn comes.',
  },
  'lobby.not_queued': {
    kind: 'caller',
    what: 'That contributor is not waiting in any queue.',
    next: 'Refresh the queue list.',
  },
  /** POST /api/me/join more often than RATE_LIMIT_JOIN a window: each join is logged for good. */
  'lobby.too_many_joins': {
    kind: 'limit',
    what: 'You joined the queue too many times in a short time.',
    next: 'Wait a moment (the answer says how long) and join again; your place, if you have one, is kept.',
  },
  /** GET /api/me?verdictWaitMs or ?turnWaitMs: this contributor already has as many held polls as one may. */
  'me.too_many_held_polls': {
    kind: 'limit',
    what: 'You already have several requests for news waiting at the coordinator.',
    next: 'Nothing to do: your page or terminal asks again without holding its request.',
  },
  /** GET /api/me/presence: this contributor already holds as many presence streams as one may. */
  'presence.too_many_streams': {
    kind: 'limit',
    what: 'You already have this ceremony open in several pages or terminals.',
    next: 'Close the ones you do not need; the others keep your place.',
  },
  /** GET /api/me/presence: the coordinator holds as many presence streams as it takes; poll instead. */
  'presence.streams_full': {
    kind: 'unavailable',
    what: 'The coordinator holds as many open connections as it takes.',
    next: 'Nothing to do: your page keeps your place by asking for news instead.',
  },
  'upload.too_large': {
    kind: 'caller',
    what: 'The file is larger than a valid contribution can be.',
    next: RETRY_TURN,
    nextInTerminal: RETRY_TURN_TERMINAL,
  },
  'upload.too_small': {
    kind: 'caller',
    what: 'The file is smaller than a valid contribution can be.',
    next: RETRY_TURN,
    nextInTerminal: RETRY_TURN_TERMINAL,
  },
  'upload.length_required': {
    kind: 'caller',
    what: 'The upload did not say its size in advance.',
    next: 'Reload the page and try again.',
    nextInTerminal: RERUN,
  },
  'upload.submitting': {
    kind: 'conflict',
    what: 'Your previous upload for this circuit is being handed in right now.',
    next: 'Wait for its verdict; this page shows it.',
    nextInTerminal: 'Wait for its verdict; this command shows it.',
  },
  /** A PATCH or DELETE to an upload whose last byte arrived: it is being handed in, or was. */
  'upload.complete': {
    kind: 'conflict',
    what: 'Your upload for this circuit already has all its bytes and is being handed in.',
    next: 'Wait for its verdict; this page shows it.',
    nextInTerminal: 'Wait for its verdict; this command shows it.',
  },
  'upload.disk_full': {
    kind: 'unavailable',
    what: 'The coordinator is short of disk space and takes no uploads for now.',
    next: OPERATOR,
  },
  'upload.failed': { kind: 'operator', what: 'The coordinator could not store your upload.', next: OPERATOR },
  /** tus: a PATCH at another offset than the upload's (ask for it with HEAD, resume from there). */
  'upload.offset_conflict': {
    kind: 'conflict',
    what: 'Part of your upload was sent twice or skipped.',
    next: 'Resume the upload; it continues from the coordinator’s copy.',
  },
  /** tus: no upload at this URL (never made, replaced by a newer one, swept, or handed in). */
  'upload.not_found': {
    kind: 'caller',
    what: 'The upload is no longer on the coordinator (replaced, expired or already handed in).',
    next: 'Start the upload again if your turn is still open.',
  },
  /** tus: a request the protocol does not allow (a header missing or malformed, an extension not offered). */
  'upload.protocol_error': {
    kind: 'caller',
    what: 'The upload request was not one the coordinator takes.',
    next: RERUN,
  },
  'verification.unavailable': {
    kind: 'unavailable',
    what: 'The coordinator could not verify your contribution right now.',
    next: 'It is checked again automatically; if it is refused you get another turn.',
  },
  'metrics.forbidden': {
    kind: 'caller',
    what: 'The coordinator’s monitoring figures are only for its operators.',
    next: 'Nothing to do: contributing does not need them.',
  },
  /**
   * A contribution or turn asked to move where its life cycle does not go: a coordinator bug, never the contributor's
   * doing.
   */
  'lifecycle.illegal_transition': {
    kind: 'operator',
    what: 'The coordinator hit an internal inconsistency while recording a contribution.',
    next: OPERATOR,
  },
} satisfies Record<string, ErrorEntry>;
