/**
 * How the coordinator's two clients (the page, web/src/sign-in/semaphore-sign-in.ts; the terminal
 * client, cli/contributor/semaphore-sign-in.ts) answer a Semaphore proof refused for load. Beyond
 * SEMAPHORE_MAX_PROOF_CHECKS checks at once, `POST /auth/semaphore` answers `503
 * auth.proof_checks_busy` with Retry-After, before the challenge is touched
 * (server/auth/proof-check-slots.ts): the same proof can be sent again, and making a new one takes
 * seconds in a browser, so the proof is resent as it is, never remade. One module, run in a
 * browser and in Node (no Node built-ins), so the two clients cannot drift apart.
 *
 * Only that code is resent: any other refusal is the coordinator's verdict on the proof (a spent or
 * unknown challenge, a root it does not accept, an invalid proof) and sending it again would get the
 * same answer. A refusal that looks like a restart is the restart rule's (restart-retry.ts).
 */
import { pause } from './restart-retry.ts';

/** The refusal for load, the only one resent. */
export const PROOF_CHECKS_BUSY = 'auth.proof_checks_busy';

/**
 * How long a client keeps resending after the first refusal. Checks take tens of ms each, so a
 * coordinator still full after this is overloaded, not briefly busy: the contributor is told, as
 * before. Well inside a challenge's 5 minutes of life (SEMAPHORE_DEFAULTS.challengeTtlMs), so a
 * resent proof does not meet its own challenge expired; if it did, `auth.challenge_unknown` is final.
 */
export const PROOF_RESEND_WINDOW_MS = 2 * 60_000;
/**
 * The pause doubles from the refusal's Retry-After at each resend, held between these: at least a
 * second (none sent, or 0), at most ten (a proxy's long one). Doubling, because every sending counts
 * against the address's sign-in attempts (RATE_LIMIT_SIGN_IN, 20 a minute by default, refused or
 * not): at a steady 1 s a client would spend them in 20 s and be locked out by `429 rate.limited`.
 * Doubling from 1 s sends at most 9 in any minute, leaving room for a second contributor behind the
 * same address (tests/core/proof-resend.test.ts).
 */
const SHORTEST_PAUSE_MS = 1000;
const LONGEST_PAUSE_MS = 10_000;
/**
 * Each pause is lengthened by up to half at random, never shortened: a crowd refused together does not
 * come back together.
 */
const JITTER = 0.5;

/** Whether `error` (the page's ApiError, the terminal's ApiError) is the refusal for load. */
export function proofChecksBusy(error: unknown): error is { code: string; retryAfterSeconds?: number } {
  return typeof error === 'object' && error !== null && (error as { code?: unknown }).code === PROOF_CHECKS_BUSY;
}

/**
 * The pause before the `attempt`th resend (1 for the first) of the same proof, for the refusal's
 * Retry-After (seconds, when it had one).
 */
export function proofResendPauseMs(
  retryAfterSeconds: number | undefined,
  attempt: number,
  random: () => number = Math.random,
): number {
  const asked = Number.isFinite(retryAfterSeconds) ? retryAfterSeconds! * 1000 : SHORTEST_PAUSE_MS;
  const grown = Math.max(asked, SHORTEST_PAUSE_MS) * 2 ** Math.min(attempt - 1, 10);
  return Math.round(Math.min(grown, LONGEST_PAUSE_MS) * (1 + JITTER * random()));
}

/** One more sending of the same proof coming, as the client may tell its user. */
export interface ProofResend {
  /** 1 for the first resend. */
  attempt: number;
  /** The pause before it. */
  inMs: number;
  /** Since the first refusal. */
  busyForMs: number;
}

export interface ProofResendOptions {
  /** Told before each pause (a client tells its user on the first). */
  onResend?(resend: ProofResend): void;
  /** Stops the waiting: the last refusal is thrown. */
  signal?: AbortSignal;
  /** Tests: a clock, a draw and a pause other than the real ones. */
  now?: () => number;
  random?: () => number;
  pause?: (ms: number, signal?: AbortSignal) => Promise<void>;
}

/**
 * `send()` (one sending of one proof), and again after the pause proofResendPauseMs gives (doubling)
 * while it is refused `auth.proof_checks_busy`, as long as the next sending comes within
 * PROOF_RESEND_WINDOW_MS of the first refusal; then that refusal is thrown. Any other failure is
 * thrown at once.
 */
export async function resendWhileProofChecksBusy<T>(
  send: () => Promise<T>,
  options: ProofResendOptions = {},
): Promise<T> {
  const now = options.now ?? Date.now;
  const wait = options.pause ?? pause;
  let busySince: number | undefined;
  for (let attempt = 1; ; attempt++) {
    try {
      return await send();
    } catch (error) {
      if (!proofChecksBusy(error) || options.signal?.aborted) throw error;
      busySince ??= now();
      const busyForMs = now() - busySince;
      const inMs = proofResendPauseMs(error.retryAfterSeconds, attempt, options.random);
      // Never sooner than asked: past the window, the refusal stands.
      if (busyForMs + inMs > PROOF_RESEND_WINDOW_MS) throw error;
      options.onResend?.({ attempt, inMs, busyForMs });
      await wait(inMs, options.signal);
      if (options.signal?.aborted) throw error;
    }
  }
}
