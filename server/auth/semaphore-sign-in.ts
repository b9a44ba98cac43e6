/**
 * Anonymous sign-in by Semaphore group membership. `POST /semaphore/challenge` hands out a
 * one-time `message`; `POST /semaphore` takes the proof and checks, in this order, each with its
 * own code: shape (request.invalid), scope = this ceremony (auth.wrong_scope), a slot among the proof
 * checks under way (auth.proof_checks_busy, before the challenge is touched, so a refusal for load leaves
 * it usable: proof-check-slots.ts), the challenge (auth.challenge_unknown; consumed here, so it is spent
 * even if a later check fails), the root (auth.unknown_root, or auth.root_expired for a past root out of
 * its window or revoked by a member removal), the proof itself with the real, awaited `verifyProof`
 * (auth.invalid_proof).
 * The nullifier is the contributor's identity: one per identity per ceremony, so a member who
 * signed out, or whose session ended, signs in again as the same contributor with a new session
 * (`semaphore:<nullifier>`). Replay is stopped by the one-time challenge, not by the nullifier.
 */
import { verifyProof } from '@semaphore-protocol/proof';
import express, { type RequestHandler, type Router } from 'express';
import { z } from 'zod';
import { CoordinatorError } from '../../core/errors.ts';
import type { Clock } from '../clock.ts';
import type { Db } from '../store/database.ts';
import { migrateAuthTables } from './auth-tables.ts';
import type { Principal } from './principal.ts';
import { ProofCheckSlots } from './proof-check-slots.ts';
import { SemaphoreChallenges } from './semaphore-challenges.ts';
import { hashClient } from './client-address.ts';
import type { SemaphoreGroup } from './semaphore-group.ts';
import { encodeSemaphoreScope } from './semaphore-scope.ts';
import type { SessionStore } from './session-store.ts';
import { signedInBody, startSession } from './start-session.ts';
import { CachedJson, sendSerialised } from '../routes/cached-json.ts';

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

/** Whether a proof verifies: the library's `verifyProof`, awaited. */
export type SemaphoreProofCheck = (proof: SemaphoreProofJson) => Promise<boolean>;

const libraryCheck: SemaphoreProofCheck = (proof) => verifyProof(proof as Parameters<typeof verifyProof>[0]);

export interface SemaphoreSignInDeps {
  db: Db;
  clock: Clock;
  ceremonyId: string;
  group: SemaphoreGroup;
  challengeTtlMs: number;
  /** Outstanding challenges at most. */
  maxChallenges: number;
  /** Proof verifications running at once, all clients together (proof-check-slots.ts). */
  maxProofChecks: number;
  /** The proof check; the library's `verifyProof` when absent. */
  verifyProof?: SemaphoreProofCheck;
  sessions: SessionStore;
  secureCookies: boolean;
  /**
   * Whole answers of `GET /semaphore/group` per address (the ceremony's reads' limit: a 304 is free); none when
   * absent. The member list grows with the group (80 kB at 1000 members) and is public, so it is limited as
   * the ceremony's other public reads are.
   */
  groupReadLimit?: RequestHandler;
}

export function createSemaphoreSignInRouter(deps: SemaphoreSignInDeps): Router {
  const { db, clock, group } = deps;
  migrateAuthTables(db);
  const scope = encodeSemaphoreScope(deps.ceremonyId);
  const challenges = new SemaphoreChallenges(db, clock, deps.challengeTtlMs, deps.maxChallenges);
  const proofChecks = new ProofCheckSlots(deps.maxProofChecks);
  const check = deps.verifyProof ?? libraryCheck;
  // First sign-in of each identity, kept for the record (how many distinct members took part).
  const recordNullifier = db.prepare(
    'INSERT OR IGNORE INTO auth_semaphore_nullifiers (scope, nullifier, used_at) VALUES (?, ?, ?)',
  );

  const router = express.Router();

  /** The public member list, so the browser can build its Merkle proof: serialised once per list, with an ETag. */
  const groupAnswer = new CachedJson();
  const groupReads: RequestHandler[] = deps.groupReadLimit ? [deps.groupReadLimit] : [];
  router.get('/semaphore/group', ...groupReads, (_req, res) => {
    const members = group.members;
    sendSerialised(
      res,
      groupAnswer.of([members], () => ({ members, root: group.root, scope })),
    );
  });

  router.post('/semaphore/challenge', (req, res) => {
    const { challenge, expiresAt } = challenges.issue(hashClient(req));
    res.json({ challenge, scope, expiresAt: new Date(expiresAt).toISOString(), groupRoot: group.root });
  });

  router.post('/semaphore', async (req, res) => {
    const parsed = proofBodySchema.safeParse(req.body);
    if (!parsed.success)
      throw new CoordinatorError(
        'request.invalid',
        'Expected { proof: SemaphoreProof } with decimal strings and 8 points',
      );
    const proof = parsed.data.proof;

    if (proof.scope !== scope)
      throw new CoordinatorError('auth.wrong_scope', 'The proof is not scoped to this ceremony');
    // Before the challenge is consumed: a refusal for load must leave the contributor's proof usable.
    const release = proofChecks.take();
    let valid = false;
    try {
      if (!challenges.consume(proof.message)) {
        throw new CoordinatorError(
          'auth.challenge_unknown',
          'The proof message is not a live challenge (unknown, expired or already used)',
        );
      }
      const rootStatus = group.rootStatus(proof.merkleTreeRoot);
      if (rootStatus === 'unknown') {
        throw new CoordinatorError('auth.unknown_root', 'The proof is for a group root this ceremony does not accept');
      }
      if (rootStatus === 'expired') {
        throw new CoordinatorError(
          'auth.root_expired',
          'The proof is for an earlier group root that is no longer accepted; make a new proof against the current ' +
            'group',
        );
      }
      valid = await check(proof).catch(() => false);
    } finally {
      release();
    }
    if (!valid) throw new CoordinatorError('auth.invalid_proof', 'The Semaphore proof does not verify');

    recordNullifier.run(scope, proof.nullifier, clock.now());
    const principal: Principal = {
      id: `semaphore:${proof.nullifier}`,
      kind: 'semaphore',
      displayName: 'anonymous',
      coordinator: false,
    };
    const session = startSession(req, res, deps.sessions, principal, deps.secureCookies);
    res.json(signedInBody(session));
  });

  return router;
}
