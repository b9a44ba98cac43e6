/**
 * An upload's owner, kept in its tus metadata (the `<id>.json` beside it): the signed-in holder of
 * the turn who created it. Only they may resume or delete it (onIncomingRequest), so whichever
 * request finds a refusal its bytes earned (their PATCH, their DELETE, their new creation, the
 * sweep), and whether or not the coordinator restarted since the upload began, the refusal is
 * handed in under the same name. These keys are written after the client's metadata: a client
 * cannot name another owner.
 */
import type { Principal, PrincipalKind } from '../auth/principal.ts';

const KINDS: readonly PrincipalKind[] = ['github', 'semaphore', 'demo', 'coordinator-token'];

/** The metadata that makes `principal` the owner of a new upload, over whatever the client sent. */
export function ownerMetadata(principal: Principal): Record<string, string> {
  return { contributor: principal.id, contributorKind: principal.kind, contributorName: principal.displayName };
}

/**
 * The owner of a stored upload, as a submission records them; undefined without a stored owner. An
 * upload created by an earlier version keeps only the id, which names its kind (`github:…`,
 * `coordinator:token`), and stands in for the name: a refused row's name goes into no transcript or receipt.
 */
export function ownerOf(metadata: Record<string, string | null> | undefined): Principal | undefined {
  const id = metadata?.contributor;
  if (!id) return undefined;
  const kind =
    KINDS.find((k) => k === metadata.contributorKind) ?? KINDS.find((k) => id.startsWith(`${k.split('-')[0]}:`));
  if (!kind) return undefined;
  // Nothing is granted by the principal a hand-in carries: it only says whose turn the verdict is.
  return { id, kind, displayName: metadata.contributorName ?? id, coordinator: false };
}
