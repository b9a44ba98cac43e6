/**
 * Anonymous sign-in with a Semaphore identity. The identity is created in this browser (or
 * pasted from an export) and its secret never leaves it: the page fetches the group's public
 * member list and a one-time challenge, proves membership with a zero-knowledge proof made here,
 * and sends only the proof. The proving artifacts are served by the coordinator beside the page
 * (/semaphore-artifacts/), never fetched from a CDN. The steps are the terminal client's too
 * (client/semaphore-sign-in.ts); this module keeps the browser's own: the identity in localStorage,
 * the proving files' URLs and the page's words.
 */
import { signInWithSemaphoreProof } from '../../../client/semaphore-sign-in.ts';
import type { ApiClient } from '../../../client/api-client.ts';
import { ApiError } from '../../../client/api-client.ts';
import type { SessionView } from '../api/api-types.ts';

const STORED_IDENTITY = 'ceremony.semaphoreIdentity';

export interface BrowserIdentity {
  /** The private key export (base64): the identity itself. Keep it secret. */
  exported: string;
  /** The public identity commitment (decimal) the coordinator adds to the group. */
  commitment: string;
}

async function identityLibrary() {
  return import('@semaphore-protocol/identity');
}

export async function createIdentity(): Promise<BrowserIdentity> {
  const { Identity } = await identityLibrary();
  const identity = new Identity();
  const created = { exported: identity.export(), commitment: identity.commitment.toString() };
  localStorage.setItem(STORED_IDENTITY, created.exported);
  return created;
}

/** Reads an exported identity; throws a plain-words error if it is not one. */
export async function importIdentity(exported: string): Promise<BrowserIdentity> {
  const { Identity } = await identityLibrary();
  try {
    const identity = Identity.import(exported.trim());
    return { exported: exported.trim(), commitment: identity.commitment.toString() };
  } catch {
    throw new ApiError(
      400,
      'semaphore.bad_export',
      'That is not an exported Semaphore identity (it should be a base64 private key).',
    );
  }
}

export async function storedIdentity(): Promise<BrowserIdentity | undefined> {
  const exported = localStorage.getItem(STORED_IDENTITY);
  return exported ? importIdentity(exported).catch(() => undefined) : undefined;
}

export function forgetStoredIdentity(): void {
  localStorage.removeItem(STORED_IDENTITY);
}

/** Proves membership and signs in; `onStatus` narrates the slow steps. */
export function signInWithSemaphore(
  api: ApiClient,
  browserIdentity: BrowserIdentity,
  onStatus: (text: string) => void,
): Promise<SessionView> {
  return signInWithSemaphoreProof({
    api,
    exported: browserIdentity.exported,
    commitment: browserIdentity.commitment,
    // Served by the coordinator beside the page, never fetched from a CDN.
    artifacts: (depth) =>
      Promise.resolve({
        wasm: `/semaphore-artifacts/semaphore-${depth}.wasm`,
        zkey: `/semaphore-artifacts/semaphore-${depth}.zkey`,
      }),
    words: {
      fetchingGroup: 'Fetching the group’s member list…',
      loadingProver: 'Loading the prover…',
      proving: 'Proving your membership in this browser (a few seconds)…',
      signingIn: 'Signing in…',
      proofChecksBusy: 'The coordinator is busy checking other sign-ins; sending the same proof again in a moment…',
      notInGroup: () => 'This identity’s commitment is not in the ceremony’s group yet.',
    },
    say: onStatus,
  });
}
