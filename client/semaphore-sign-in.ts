/**
 * Anonymous sign-in with a Semaphore identity, the same steps in the page and in the terminal
 * client: the group's public member list and a one-time challenge from the coordinator, the
 * membership proof made here, only the proof sent. The identity (an exported private key) never
 * leaves the front end that holds it. The Semaphore libraries load only when used.
 *
 * A proof refused for load (`auth.proof_checks_busy`) has its challenge unspent: the same proof is
 * sent again, for up to two minutes (proof-resend.ts); making a new one would take seconds. A proof
 * spends its challenge, so a sign-in whose answer was lost to a coordinator restart is not sent
 * again: with `restarts`, it is made again from a new challenge (the nullifier, the contributor's
 * identity, is the same each time; restart-retry.ts).
 */
import type { SessionView } from '../core/coordinator-api/api-types.ts';
import { ApiError, type ApiClient } from './api-client.ts';
import { resendWhileProofChecksBusy } from './proof-resend.ts';
import { looksLikeRestart, rideOutRestart, type RestartRetry } from './restart-retry.ts';

/** The proving files for the group's depth: URLs beside the page, or files on a terminal's disk. */
export interface SemaphoreArtifacts {
  wasm: string;
  zkey: string;
  cleanup?(): Promise<void>;
}

/** What each front end says at each step, in its own words (the page's sentences, the terminal's lines). */
export interface SemaphoreWords {
  fetchingGroup?: string;
  loadingProver?: string;
  proving: string;
  signingIn?: string;
  proofChecksBusy: string;
  notInGroup(commitment: string): string;
}

export interface SemaphoreSignIn {
  api: ApiClient;
  /** The exported identity, and its public commitment (known before any library loads). */
  exported: string;
  commitment: string;
  artifacts(depth: number): Promise<SemaphoreArtifacts>;
  words: SemaphoreWords;
  say(text: string): void;
  /** Check the proof before it is sent (proving files that came from elsewhere may be damaged). */
  checkProof?: boolean;
  /** Make the proof again from a new challenge while the coordinator does not answer. */
  onRestart?(retry: RestartRetry): void;
}

/** Proves membership and signs in; resolves with the new session (its CSRF token kept by `api`). */
export async function signInWithSemaphoreProof<T extends { csrfToken?: string } = SessionView>(
  options: SemaphoreSignIn,
): Promise<T> {
  const { api, words, say } = options;
  if (words.fetchingGroup) say(words.fetchingGroup);
  const group = await api.get<{ members: string[]; root: string; scope: string }>('/auth/semaphore/group');
  // Before any proof is made: the coordinator would refuse it for its root.
  if (!group.members.includes(options.commitment))
    throw new ApiError(403, 'auth.unknown_root', words.notInGroup(options.commitment));
  if (words.loadingProver) say(words.loadingProver);
  const [{ Identity }, { Group }, { generateProof, verifyProof }] = await Promise.all([
    import('@semaphore-protocol/identity'),
    import('@semaphore-protocol/group'),
    import('@semaphore-protocol/proof'),
  ]);
  const identity = Identity.import(options.exported);
  const members = new Group(group.members.map((member) => BigInt(member)));
  const depth = Math.max(1, members.depth);
  const artifacts = await options.artifacts(depth);
  const proveAndSignIn = async (): Promise<T> => {
    const challenge = await api.post<{ challenge: string; scope: string }>('/auth/semaphore/challenge');
    say(words.proving);
    const proof = await generateProof(identity, members, challenge.challenge, challenge.scope, depth, {
      wasm: artifacts.wasm,
      zkey: artifacts.zkey,
    });
    if (options.checkProof && !(await verifyProof(proof))) {
      throw new ApiError(
        0,
        'auth.invalid_proof',
        'the membership proof made here does not verify against Semaphore’s own key; the proving files may be damaged',
      );
    }
    if (words.signingIn) say(words.signingIn);
    return resendWhileProofChecksBusy(() => api.signIn<T>('/auth/semaphore', { proof }), {
      onResend: (resend) => {
        if (resend.attempt === 1) say(words.proofChecksBusy);
      },
    });
  };
  try {
    if (!options.onRestart) return await proveAndSignIn();
    return await rideOutRestart(proveAndSignIn, {
      restartReason: (error) =>
        error instanceof ApiError && looksLikeRestart(error.status, error.code) ? error.message : undefined,
      onRetry: options.onRestart,
    });
  } finally {
    await artifacts.cleanup?.();
  }
}
