/**
 * A signed-in contributor's own view and actions: join the queues (every circuit, or a choice of
 * them), leave them, see where they stand in every circuit (position, ETA, deadline, verdicts),
 * keep their turn alive, fetch their signed receipts (acceptances, and the steps of the queue log
 * that have one: joins, refusals, removals). Asking for their view, or holding the presence stream
 * open (presence-stream.ts), is how a waiting contributor's client shows it is still there (the
 * lobby's presence). Every route is limited per contributor (rate-limits.ts) but leaving, which must
 * always work.
 */
import { Router, type RequestHandler } from 'express';
import { z } from 'zod';
import { findCircuit, type CeremonyConfig } from '../../core/config/ceremony-config.ts';
import { CoordinatorError } from '../../core/errors.ts';
import type { Lobby } from '../lobby/lobby.ts';
import type { CeremonyService } from '../ceremony-service.ts';
import type { ContributionStore } from '../contributions/contribution-store.ts';
import type { CeremonyPhaseStore } from '../ceremony-phase.ts';
import type { Principal } from '../auth/principal.ts';
import type { Clock } from '../clock.ts';
import type { PresenceStreams } from './presence-stream.ts';
import { jsonBody } from '../http/json-body.ts';
import { MAX_VERDICT_WAIT_MS } from '../contributions/verdict-waiters.ts';
import { HOLD_TURN_WAIT_WITHIN } from '../../core/coordinator-api/lobby-status.ts';
import { HeldPolls, MAX_TURN_WAIT_MS, statusKey, untilChanged } from './held-polls.ts';

export interface ContributorRouterDeps {
  config: CeremonyConfig;
  lobby: Lobby;
  contributions: ContributionStore;
  phase: CeremonyPhaseStore;
  clock: Clock;
  /**
   * Runs the lobby's clock now: its events are logged and counted there, never lost; watchLobby
   * calls back after each tick (a held turn wait re-reads its status then).
   */
  service: Pick<CeremonyService, 'tick' | 'moveAndTick' | 'watchLobby'>;
  /** Drops the unfinished upload of a turn given up by leaving (ContributionUploads). */
  uploads?: { discardUnfinished(circuit: string, contributorId: string): Promise<number> };
  log?: { info(message: string, fields?: Record<string, unknown>): void };
  /** GET /api/me/presence; absent: no such route (presence by polls only). */
  presenceStreams?: PresenceStreams;
  requireContributor: RequestHandler;
  requireCsrf: RequestHandler;
  /** Joins per contributor (rate-limits.ts): each is an entry of the public queue log for good. */
  joinLimit?: RequestHandler;
  /** GET /api/me, presence streams opened and heartbeats, per contributor (rate-limits.ts). */
  contributorLimit?: RequestHandler;
  /** GET /api/me/receipts per contributor (rate-limits.ts). */
  receiptLimit?: RequestHandler;
}

/**
 * Step receipts in one answer of `GET /api/me/receipts` at most (the newest; `?stepsBefore=SEQ` for older ones): an
 * honest contributor has a few per circuit, and the answer is saved whole as a receipts file.
 */
export const STEP_RECEIPTS_PER_ANSWER = 1000;
const receiptsQuery = z.object({ stepsBefore: z.coerce.number().int().positive().optional() }).strict();

/** `POST /api/me/join`: no body (or `{}`) joins every circuit; `{ circuits }` only those. */
const joinBody = z.object({ circuits: z.array(z.string().min(1).max(100)).min(1).optional() }).strict();

/** Problems a refused join names at most: its message never grows with what was sent. */
const JOIN_ISSUES_SHOWN = 3;

/**
 * The circuits a join names (undefined: every circuit), each one of this ceremony's. The count is
 * checked before any element is looked at, and a refusal names a few problems at most, each name
 * quoted at a bounded length (findCircuit), so a body of thousands of entries costs no more to refuse
 * than one of ten.
 */
function joinedCircuits(config: CeremonyConfig, body: unknown): string[] | undefined {
  const sent = (body as { circuits?: unknown } | undefined)?.circuits;
  if (Array.isArray(sent) && sent.length > config.circuits.length)
    throw new CoordinatorError(
      'request.invalid',
      `expected no body, or { circuits: [names] } of at most this ceremony's ${config.circuits.length} circuits`,
    );
  const parsed = joinBody.safeParse(body ?? {});
  if (!parsed.success) {
    const { issues } = parsed.error;
    const shown = issues.slice(0, JOIN_ISSUES_SHOWN).map((i) => `${i.path.join('.') || 'body'}: ${i.message}`);
    const more = issues.length > JOIN_ISSUES_SHOWN ? ` (and ${issues.length - JOIN_ISSUES_SHOWN} more)` : '';
    throw new CoordinatorError(
      'request.invalid',
      `expected no body, or { circuits: [names] }: ${shown.join('; ').slice(0, 500)}${more}`,
    );
  }
  return parsed.data.circuits?.map((name) => findCircuit(config, name).name);
}

/**
 * `?verdictWaitMs=N`: hold the answer while one of the contributor's contributions is being verified,
 * until its verdict is in or N ms passed (at most MAX_VERDICT_WAIT_MS); absent, 0: answer at once.
 */
function waitMsOf(raw: unknown, name: string, max: number): number {
  if (raw === undefined) return 0;
  const ms = typeof raw === 'string' && /^\d{1,9}$/.test(raw) ? Number(raw) : NaN;
  if (!Number.isSafeInteger(ms))
    throw new CoordinatorError('request.invalid', `${name} must be a whole number of milliseconds`);
  return Math.min(ms, max);
}

/**
 * `?turnWaitMs=N`: while the contributor waits in a queue, hold the answer until their status
 * changes (a grant, a standby offer, a place in line: held-polls.ts statusKey) or N ms passed (at
 * most MAX_TURN_WAIT_MS); absent, 0, not waiting, or further back than HOLD_TURN_WAIT_WITHIN: answer at once.
 */
function turnWaitMs(raw: unknown): number {
  return waitMsOf(raw, 'turnWaitMs', MAX_TURN_WAIT_MS);
}

function principal(req: { principal?: Principal }): Principal {
  if (!req.principal) throw new CoordinatorError('auth.required', 'sign in first');
  return req.principal;
}

/**
 * GET /api/me: the contributor's view, held (`verdictWaitMs`) until a contribution's verdict is in,
 * or (`turnWaitMs`) while they wait in a queue until their status changes; at most two held at once.
 */
function meRoute(deps: ContributorRouterDeps, view: (who: Principal) => unknown): RequestHandler {
  const heldPolls = new HeldPolls();
  /**
   * The status a turn wait holds on (statusKey), when the contributor waits within HOLD_TURN_WAIT_WITHIN
   * of a queue's front and has no offer yet.
   */
  const turnWaitFrom = (contributorId: string): string | undefined => {
    const status = deps.lobby.status(contributorId);
    const waits = status.circuits.some(
      (c) => c.state === 'waiting' && c.standbyUntil === undefined && c.position <= HOLD_TURN_WAIT_WITHIN,
    );
    const busy = status.circuits.some((c) => c.state === 'turn' || c.state === 'verifying');
    return waits && !busy ? statusKey(status) : undefined;
  };
  return async (req, res) => {
    const who = principal(req);
    // Back after being away: a free circuit that passed them over is theirs now, not at the next tick.
    if (deps.lobby.seen(who.id)) deps.service.tick();
    const waitMs = waitMsOf(req.query.verdictWaitMs, 'verdictWaitMs', MAX_VERDICT_WAIT_MS);
    const turnMs = turnWaitMs(req.query.turnWaitMs);
    const verifying =
      waitMs > 0 ? deps.contributions.forContributor(who.id).filter((c) => c.status === 'verifying') : [];
    const waiting = turnMs > 0 && verifying.length === 0 ? turnWaitFrom(who.id) : undefined;
    const release = verifying.length > 0 || waiting ? heldPolls.take(who.id) : undefined;
    if (release) {
      const closed = new AbortController();
      res.once('close', () => closed.abort());
      try {
        if (waiting)
          await untilChanged(
            (onChange) => deps.service.watchLobby(onChange),
            () => statusKey(deps.lobby.status(who.id)) !== waiting,
            turnMs,
            closed.signal,
          );
        else
          await deps.contributions.verdictWaiters.wait(
            verifying.map((c) => c.id),
            waitMs,
            closed.signal,
          );
      } finally {
        release();
      }
      if (closed.signal.aborted) return;
    }
    res.json(view(who));
  };
}

export function createContributorRouter(deps: ContributorRouterDeps): Router {
  const router = Router();
  const guard = [deps.requireContributor, deps.requireCsrf];
  // Leave has none: giving a place up must always work, and a leave logs something only after a join (or a step
  // of the ceremony) put the contributor somewhere.
  const joinGuard = [...guard, ...(deps.joinLimit ? [deps.joinLimit] : []), jsonBody()];
  const ownGuard = deps.contributorLimit ? [...guard, deps.contributorLimit] : guard;
  const receiptGuard = deps.receiptLimit ? [...guard, deps.receiptLimit] : guard;

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

  router.get(
    '/api/me',
    ...ownGuard,
    meRoute(deps, (who) => view(who)),
  );

  if (deps.presenceStreams)
    router.get(
      '/api/me/presence',
      ...ownGuard,
      deps.presenceStreams.handler((req) => principal(req).id),
    );

  router.post('/api/me/join', ...joinGuard, (req, res) => {
    const phase = deps.phase.get();
    if (phase === 'closed' || phase === 'finalising' || phase === 'finalised')
      throw new CoordinatorError('ceremony.not_open', `the ceremony is ${phase}; it takes no more contributors`);
    const circuits = joinedCircuits(deps.config, req.body);
    const who = principal(req);
    deps.lobby.join(who.id, circuits, who.displayName);
    deps.service.tick(); // grant a free circuit at once rather than at the next timer tick
    res.json(view(who));
  });

  // Leaving is allowed in every phase: a contributor must always be able to give their place up.
  router.post('/api/me/leave', ...guard, async (req, res) => {
    const who = principal(req);
    // A turn left goes to the next in line in the leave's own transaction, before its upload is discarded.
    const outcome = deps.service.moveAndTick(
      () => deps.lobby.leave(who.id),
      (left) => left.left === 'turn',
    );
    if (outcome.left !== 'nothing')
      deps.log?.info('lobby entry left by the contributor', { contributorId: who.id, ...outcome });
    // The turn is over: a PATCH still writing to its upload is stopped and the file goes now,
    // rather than at the expiry sweep.
    if (outcome.left === 'turn') await deps.uploads?.discardUnfinished(outcome.circuit, who.id);
    res.json({ ...view(who), left: outcome });
  });

  router.post('/api/circuits/:name/heartbeat', ...ownGuard, (req, res) => {
    const circuit = findCircuit(deps.config, String(req.params.name));
    res.json(deps.lobby.heartbeat(principal(req).id, circuit.name));
  });

  router.get('/api/me/receipts', ...receiptGuard, (req, res) => {
    const who = principal(req).id;
    const query = receiptsQuery.safeParse(req.query);
    if (!query.success) throw new CoordinatorError('request.invalid', 'expected no query, or stepsBefore=SEQ');
    const page = deps.lobby.queueLog.stepReceiptsPage(who, STEP_RECEIPTS_PER_ANSWER, query.data.stepsBefore);
    res.json({
      receipts: deps.contributions.receiptsFor(who),
      steps: page.steps,
      // Only when some are left out: the answer is otherwise what it always was.
      ...(page.older > 0 ? { olderSteps: page.older } : {}),
    });
  });

  return router;
}
