/**
 * Anonymous sign-in with a Semaphore identity. The identity is created in this browser (or
 * pasted from an export) and its secret never leaves it: the page fetches the group's public
 * member list and a one-time challenge, proves membership with a zero-knowledge proof made here,
 * and sends only the proof. The proving artifacts are served by the coordinator beside the page
 * (/semaphore-artifacts/), never fetched from a CDN. The Semaphore libraries load only when used.
 * A proof refused for load (`auth.proof_checks_busy`, its challenge unspent) is sent again as it is
 * for up to two minutes, as the terminal client does (client/proof-resend.ts): making a
 * new one would take seconds.
 */
import { resendWhileProofChecksBusy } from '../../../client/proof-resend.ts';
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
export async function signInWithSemaphore(
  api: ApiClient,
  browserIdentity: BrowserIdentity,
  onStatus: (text: string) => void,
): Promise<SessionView> {
  onStatus('Fetching the group’s member list…');
  const group = await api.get<{ members: string[]; root: string; scope: string }>('/auth/semaphore/group');
  if (!group.members.includes(browserIdentity.commitment)) {
    throw new ApiError(403, 'auth.unknown_root', 'This identity’s commitment is not in the ceremony’s group yet.');
  }
  onStatus('Loading the prover…');
  const [{ Identity }, { Group }, { generateProof }] = await Promise.all([
    identityLibrary(),
    import('@semaphore-protocol/group'),
    import('@semaphore-protocol/proof'),
  ]);
  const identity = Identity.import(browserIdentity.exported);
  const members = new Group(group.members.map((m) => BigInt(m)));
  const depth = Math.max(1, members.depth);
  const challenge = await api.post<{ challenge: string; scope: string }>('/auth/semaphore/challenge');
  onStatus('Proving your membership in this browser (a few seconds)…');
  const proof = await generateProof(identity, members, challenge.challenge, challenge.scope, depth, {
    wasm: `/semaphore-artifacts/semaphore-${depth}.wasm`,
    zkey: `/semaphore-artifacts/semaphore-${depth}.zkey`,
  });
  onStatus('Signing in…');
  return resendWhileProofChecksBusy(() => api.signIn('/auth/semaphore', { proof }), {
    onResend: (resend) => {
      if (resend.attempt === 1)
        onStatus('The coordinator is busy checking other sign-ins; sending the same proof again in a moment…');
    },
  });
}
