/**
 * Coordinator sign-in with a shared token from the environment: `POST /coordinator { token }`
 * gives principal `coordinator:token`. Compared in constant time over sha256 digests (equal
 * lengths whatever was sent). Without a configured token the route refuses everyone.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import express, { type Router } from 'express';
import { z } from 'zod';
import { CoordinatorError } from '../../core/errors.ts';
import type { Principal } from './principal.ts';
import type { SessionStore } from './session-store.ts';
import { signedInBody, startSession } from './start-session.ts';

const tokenBodySchema = z.object({ token: z.string().min(1).max(1024) });

export interface CoordinatorSignInDeps {
  /** Undefined = coordinator token sign-in is off. */
  coordinatorToken: string | undefined;
  sessions: SessionStore;
  secureCookies: boolean;
}

export function createCoordinatorSignInRouter(deps: CoordinatorSignInDeps): Router {
  const expected = deps.coordinatorToken === undefined ? undefined : sha256(deps.coordinatorToken);
  const router = express.Router();
  router.post('/coordinator', (req, res) => {
    if (expected === undefined)
      throw new CoordinatorError('auth.not_coordinator', 'Coordinator token sign-in is not configured');
    const parsed = tokenBodySchema.safeParse(req.body);
    if (!parsed.success) throw new CoordinatorError('request.invalid', 'Expected { token }');
    if (!timingSafeEqual(sha256(parsed.data.token), expected)) {
      throw new CoordinatorError('auth.not_coordinator', 'Wrong coordinator token');
    }
    const principal: Principal = {
      id: 'coordinator:token',
      kind: 'coordinator-token',
      displayName: 'coordinator',
      coordinator: true,
    };
    res.json(signedInBody(startSession(req, res, deps.sessions, principal, deps.secureCookies)));
  });
  return router;
}

function sha256(value: string): Buffer {
  return createHash('sha256').update(value).digest();
}
