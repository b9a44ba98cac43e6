/**
 * Anonymous sign-in by Semaphore group membership. `POST /semaphore/challenge` hands out a
 * one-time `message`; `POST /semaphore` takes the proof and checks, in this order, each with its
 * own code: shape (request.invalid), scope = this ceremony (auth.wrong_scope), the challenge
 * (auth.challenge_unknown; consumed here, so it is spent even if a later check fails), the root
 * (auth.unknown_root), the proof itself with the real, awaited `verifyProof` (auth.invalid_proof),
 * and the nullifier (auth.nullifier_used). The nullifier is the contributor's identity: one per
 * identity per ceremony. It is spent at the first sign-in, and a second sign-in with it is refused;
 * a returning contributor resumes with the session cookie the first sign-in set.
 */
import { verifyProof } from '@semaphore-protocol/proof';
import express, { type Router } from 'express';
import { z } from 'zod';
import { CoordinatorError } from '../../core/errors.ts';
import type { Clock } from '../clock.ts';
import type { Db } from '../store/database.ts';
import { migrateAuthTables } from './auth-tables.ts';
import type { Principal } from './principal.ts';
import { SemaphoreChallenges } from './semaphore-challenges.ts';
import type { SemaphoreGroup } from './semaphore-group.ts';
import { encodeSemaphoreScope } from './semaphore-scope.ts';
import type { SessionStore } from './session-store.ts';
import { signedInBody, startSession } from './start-session.ts';

const decimal = z.string().regex(/^(0|[1-9][0-9]{0,77})$/);

const proofBodySchema = z.object({
  proof: z.object({
    merkleTreeDepth: z.number().int().min(1).max(32),
    merkleTreeRoot: decimal,
    nullifier: decimal,
    message: decimal,
    scope: decimal,
    points: z.array(decimal).length(8),
  }),
});

/** The SemaphoreProof JSON as `generateProof` returns it (the package's own type does not resolve under NodeNext). */
export type SemaphoreProofJson = z.infer<typeof proofBodySchema>['proof'];

export interface SemaphoreSignInDeps {
  db: Db;
  clock: Clock;
  ceremonyId: string;
  group: SemaphoreGroup;
  challengeTtlMs: number;
  sessions: SessionStore;
  secureCookies: boolean;
}

export function createSemaphoreSignInRouter(deps: SemaphoreSignInDeps): Router {
  const { db, clock, group } = deps;
  migrateAuthTables(db);
  const scope = encodeSemaphoreScope(deps.ceremonyId);
  const challenges = new SemaphoreChallenges(db, clock, deps.challengeTtlMs);
  const spendNullifier = db.prepare('INSERT OR IGNORE INTO auth_semaphore_nullifiers (scope, nullifier, used_at) VALUES (?, ?, ?)');

  const router = express.Router();

  /** The public member list, so the browser can build its Merkle proof. */
  router.get('/semaphore/group', (_req, res) => {
    res.json({ members: group.members, root: group.root, scope });
  });

  router.post('/semaphore/challenge', (_req, res) => {
    const { challenge, expiresAt } = challenges.issue();
    res.json({ challenge, scope, expiresAt: new Date(expiresAt).toISOString(), groupRoot: group.root });
  });

  router.post('/semaphore', async (req, res) => {
    const parsed = proofBodySchema.safeParse(req.body);
    if (!parsed.success) throw new CoordinatorError('request.invalid', 'Expected { proof: SemaphoreProof } with decimal strings and 8 points');
    const proof = parsed.data.proof;

    if (proof.scope !== scope) throw new CoordinatorError('auth.wrong_scope', 'The proof is not scoped to this ceremony');
    if (!challenges.consume(proof.message)) {
      throw new CoordinatorError('auth.challenge_unknown', 'The proof message is not a live challenge (unknown, expired or already used)');
    }
    if (!group.isAcceptedRoot(proof.merkleTreeRoot)) {
      throw new CoordinatorError('auth.unknown_root', 'The proof is for a group root this ceremony does not accept');
    }
    let valid = false;
    try {
      valid = await verifyProof(proof as Parameters<typeof verifyProof>[0]);
    } catch {
      valid = false;
    }
    if (!valid) throw new CoordinatorError('auth.invalid_proof', 'The Semaphore proof does not verify');

    if (spendNullifier.run(scope, proof.nullifier, clock.now()).changes !== 1) {
      throw new CoordinatorError('auth.nullifier_used', 'This identity has already signed in to this ceremony; resume from the browser that did');
    }
    const principal: Principal = { id: `semaphore:${proof.nullifier}`, kind: 'semaphore', displayName: 'anonymous', coordinator: false };
    const session = startSession(req, res, deps.sessions, principal, deps.secureCookies);
    res.json(signedInBody(session));
  });

  return router;
}
