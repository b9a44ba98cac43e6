/**
 * What one error code declares, once, in its family's table under core/error-codes/: its kind (which
 * gives its HTTP status and the CLI's exit status) and its plain words for both contributor clients.
 * core/errors.ts composes the families into the one table the codes come from.
 */

/**
 * What kind of failure a code is. The server answers each kind with one HTTP status
 * (server/http/error-status.ts), overridden per code only where HTTP has a status of its own for it
 * (401, 403, 404, 410, 411, 413, 507).
 */
export type ErrorKind =
  /** The `ceremony` command was called wrongly (its arguments, a file it was given): 400, and the CLI exits 2. */
  | 'usage'
  /** A request the caller made wrongly (its body, a value, signing in), or too early: 400. */
  | 'caller'
  /** A request the ceremony's state does not allow now (its phase, a turn, a head that moved on): 409. */
  | 'conflict'
  /** A well-formed file or record that fails a check (a candidate key, a receipt, a transcript): 422. */
  | 'refusal'
  /** Too many of something from this caller, in a window or at once: 429 (with Retry-After). */
  | 'limit'
  /** The coordinator cannot take it right now, though nothing is wrong with the request: 503. */
  | 'unavailable'
  /** Another service failed or answered wrongly (GitHub, a JSON-RPC endpoint, the coordinator a client reads): 502. */
  | 'upstream'
  /** The coordinator's or the ceremony's own files or setup are wrong, nothing the caller can fix: 500. */
  | 'operator';

export interface PlainWords {
  /** What happened, for someone who has never seen a zkey. */
  what: string;
  /** What happens next, or what to do (in the page's terms). */
  next: string;
}

export interface ErrorWords extends PlainWords {
  /** What happens next for the terminal client, where the page's words (the tab, reloading) do not fit. */
  nextInTerminal?: string;
}

export interface ErrorEntry extends ErrorWords {
  readonly kind: ErrorKind;
  /**
   * A verdict on a candidate zkey: it can never be the next link of its chain. The verifier
   * returns it as an answer that is never retried; anything else a verifier throws is a problem of
   * the verifier (I/O, a crash), retried, and decides nothing about the contribution.
   */
  readonly refusesContribution?: true;
}

export const RETRY_TURN =
  'You are back in the queue for this circuit. When your turn comes ' +
  'again, this page contributes again with fresh randomness; there is ' +
  'nothing you need to do but keep the tab open.';
export const RETRY_TURN_TERMINAL =
  'You are back in the queue for this circuit. When your turn comes ' +
  'again, this command contributes again with fresh randomness; there is ' +
  'nothing you need to do but keep it running.';
export const RERUN = 'Run the command again; if it persists, tell the coordinator.';
export const OPERATOR =
  'This is a problem on the coordinator’s side, not yours. The coordinator has been told; please try again later.';
export const SIGN_IN_AGAIN = 'Sign in again.';
export const LEGACY_NEXT =
  'Check it from your own checkout with `ceremony verify-receipt` (or `ceremony audit`) and ' +
  '--allow-legacy-transcript, which says what it could not prove.';

/** A candidate key the verifier refused: the contributor is back in the queue, whatever the reason. */
export function refusedFile(kind: 'refusal' | 'conflict', what: string): ErrorEntry {
  return {
    kind,
    refusesContribution: true,
    what: `Your contribution was refused: ${what}`,
    next: RETRY_TURN,
    nextInTerminal: RETRY_TURN_TERMINAL,
  };
}
