/**
 * A signed-in contributor's own view and actions: join the queues, see where they stand in every
 * circuit (position, ETA, deadline, verdicts), keep their turn alive, fetch their signed receipts.
 */
import { Router, type RequestHandler } from 'express';
import { findCircuit, type CeremonyConfig } from '../../core/config/ceremony-config.ts';
import { CoordinatorError } from '../../core/errors.ts';
import type { Lobby } from '../lobby/lobby.ts';
import type { ContributionStore } from '../contributions/contribution-store.ts';
import type { CeremonyPhaseStore } from '../ceremony-phase.ts';
import type { Principal } from '../auth/principal.ts';
import type { Clock } from '../clock.ts';

export interface ContributorRouterDeps {
  config: CeremonyConfig;
  lobby: Lobby;
  contributions: ContributionStore;
  phase: CeremonyPhaseStore;
  clock: Clock;
  /** Runs the lobby's clock now: its events are logged and counted there, never lost. */
  service: { tick(): void };
  requireContributor: RequestHandler;
  requireCsrf: RequestHandler;
}

function principal(req: { principal?: Principal }): Principal {
  if (!req.principal) throw new CoordinatorError('auth.required', 'sign in first');
  return req.principal;
}

export function createContributorRouter(deps: ContributorRouterDeps): Router {
  const router = Router();
  const guard = [deps.requireContributor, deps.requireCsrf];

  const view = (who: Principal) => ({
    principal: who,
    now: deps.clock.now(),
    phase: deps.phase.get(),
    status: deps.lobby.status(who.id),
    contributions: deps.contributions.forContributor(who.id).map((c) => ({
      id: c.id,
      circuit: c.circuit,
      status: c.status,
      code: c.code,
      message: c.message,
      contributionHash: c.contributionHash,
      index: c.chainIndex,
      createdAt: c.createdAt,
      finishedAt: c.finishedAt,
    })),
  });

  router.get('/api/me', ...guard, (req, res) => {
    res.json(view(principal(req)));
  });

  router.post('/api/me/join', ...guard, (req, res) => {
    const phase = deps.phase.get();
    if (phase === 'closed' || phase === 'finalising' || phase === 'finalised') throw new CoordinatorError('ceremony.not_open', `the ceremony is ${phase}; it takes no more contributors`);
    const who = principal(req);
    deps.lobby.join(who.id);
    deps.service.tick(); // grant a free circuit at once rather than at the next timer tick
    res.json(view(who));
  });

  router.post('/api/circuits/:name/heartbeat', ...guard, (req, res) => {
    const circuit = findCircuit(deps.config, String(req.params.name));
    res.json(deps.lobby.heartbeat(principal(req).id, circuit.name));
  });

  router.get('/api/me/receipts', ...guard, (req, res) => {
    res.json({ receipts: deps.contributions.receiptsFor(principal(req).id) });
  });

  return router;
}
