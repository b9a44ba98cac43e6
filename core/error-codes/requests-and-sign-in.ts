/**
 * The coordinator's answers to a request as such (invalid, too large, nowhere) and to signing in
 * (GitHub, its device flow, Semaphore, the coordinator's own sign-in).
 */
import { type ErrorEntry, OPERATOR, RERUN, SIGN_IN_AGAIN } from './error-entry.ts';

export const REQUEST_AND_SIGN_IN_CODES = {
  'request.invalid': {
    kind: 'caller',
    what: 'The coordinator refused the request as invalid.',
    next: 'Reload the page and try again.',
    nextInTerminal: RERUN,
  },
  'request.too_large': {
    kind: 'caller',
    what: 'The request was larger than the coordinator accepts.',
    next: 'Reload the page and try again.',
    nextInTerminal: RERUN,
  },
  /** A URL of a file that never changes (a key, the inputs, the ptau, …) with a query string: caches would miss. */
  'request.query_not_allowed': {
    kind: 'caller',
    what: 'A file of the ceremony was asked for with a query string (`?…`), which its address never has.',
    next: 'Reload the page and try again.',
    nextInTerminal: RERUN,
  },
  not_found: { kind: 'caller', what: 'That does not exist (yet).', next: 'Reload the page.', nextInTerminal: RERUN },
  /** Anything that is not a CoordinatorError: the details go to the coordinator's log, never out. */
  internal: { kind: 'operator', what: 'The coordinator ran into an unexpected problem.', next: OPERATOR },
  'manifest.not_finalised': {
    kind: 'caller',
    what: 'The ceremony is not finalised yet, so there is no manifest.',
    next: 'It appears here once the coordinator finalises the ceremony.',
  },
  'auth.required': { kind: 'caller', what: 'You are not signed in (or your session expired).', next: SIGN_IN_AGAIN },
  'auth.below_minimum': {
    kind: 'caller',
    what: 'Your GitHub account does not meet this ceremony’s minimums (followers, repositories or age).',
    next: 'You can sign in anonymously with a Semaphore identity if the coordinator added you to the group.',
  },
  'auth.github_failed': { kind: 'upstream', what: 'GitHub sign-in did not complete.', next: 'Try again in a moment.' },
  'auth.invalid_proof': {
    kind: 'caller',
    what: 'Your membership proof did not verify.',
    next: 'Check that you pasted the right identity and try again.',
    nextInTerminal: 'Check that the identity file (or variable) holds the right exported identity and try again.',
  },
  'auth.challenge_unknown': {
    kind: 'caller',
    what: 'The sign-in challenge expired or was already used.',
    next: 'Try again: a fresh challenge is fetched each time.',
  },
  'auth.wrong_scope': { kind: 'caller', what: 'The proof was made for another ceremony.', next: 'Try again.' },
  'auth.unknown_root': {
    kind: 'caller',
    what: 'Your identity is not in this ceremony’s group (or the group changed).',
    next: 'Ask the coordinator to add your identity commitment, then try again.',
  },
  'auth.root_expired': {
    kind: 'caller',
    what: 'Your proof was made for an earlier version of the group, which is no longer accepted.',
    next: 'Sign in again: a new proof is made against the current group.',
  },
  'auth.not_coordinator': {
    kind: 'caller',
    what: 'This account is not a coordinator of the ceremony.',
    next: 'Sign in with a coordinator account or token.',
  },
  'auth.csrf': {
    kind: 'caller',
    what: 'The page’s security token was missing or stale.',
    next: 'Reload the page and try again.',
    nextInTerminal: RERUN,
  },
  'auth.demo_disabled': {
    kind: 'caller',
    what: 'Test-network sign-in is off on this server.',
    next: 'Use another sign-in method.',
  },
  /**
   * GitHub device flow (`ceremony contribute --github`): not authorized at GitHub yet; poll again after the interval.
   */
  'auth.device_pending': {
    kind: 'caller',
    what: 'GitHub sign-in is waiting for you to enter the code at GitHub and authorize the ceremony.',
    next: 'Enter the code at the address shown; the sign-in completes by itself.',
  },
  /** GitHub device flow: polled faster than the interval; wait 5 s longer between polls (RFC 8628). */
  'auth.device_slow_down': {
    kind: 'limit',
    what: 'GitHub sign-in was asked for its answer too often.',
    next: 'Nothing to do: it keeps asking, a little less often.',
  },
  /** GitHub device flow: the code expired, or the handle is unknown or already used; start again. */
  'auth.device_expired': {
    kind: 'caller',
    what: 'The GitHub sign-in code expired (or was already used) before it was authorized.',
    next: 'Sign in again to get a new code, and enter it at GitHub within its time.',
  },
  /** GitHub device flow: the person cancelled the authorization at GitHub. */
  'auth.device_denied': {
    kind: 'caller',
    what: 'The GitHub sign-in was refused at GitHub (the authorization was cancelled).',
    next: 'Sign in again and authorize the ceremony at GitHub if you want to contribute with that account.',
  },
} satisfies Record<string, ErrorEntry>;
