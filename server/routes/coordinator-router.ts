/**
 * Coordinator actions: open, pause and close the ceremony, watch heads, queues and verification
 * jobs, announce the beacon and finalise. Every route needs a coordinator identity, and every change a CSRF token.
 */
import { Router, type RequestHandler } from 'express';
import { z } from 'zod';
import {
  refuseAfterBeaconAnnouncement,
  refuseTooFewContributions,
  type BeaconAnnouncementEntry,
  type CeremonyState,
} from '../../core/ceremony/open-ceremony.ts';
import type { CeremonyConfig } from '../../core/config/ceremony-config.ts';
import { CoordinatorError } from '../../core/errors.ts';
import { finaliseCeremony } from '../../core/finalise/finalise-ceremony.ts';
import { announceBeacon, finalBeacon } from '../../core/finalise/beacon-announcement.ts';
import type { Lobby } from '../lobby/lobby.ts';
import { jsonBody } from '../http/json-body.ts';
import type { ContributionStore } from '../contributions/contribution-store.ts';
import type { CeremonyPhaseStore } from '../ceremony-phase.ts';
import { COORDINATOR_PHASES } from '../../core/ceremony/ceremony-phases.ts';
import type { Clock } from '../clock.ts';
import type { ServiceLog } from '../ceremony-service.ts';
import type { BeaconAnnounceResult, BeaconAnnouncementView } from '../../core/coordinator-api/api-types.ts';

export interface CoordinatorRouterDeps {
  config: CeremonyConfig;
  lobby: Lobby;
  contributions: ContributionStore;
  phase: CeremonyPhaseStore;
  clock: Clock;
  /** Provides the ceremony on disk, cached until the transcript changes. */
  service: { ceremonyState(): Promise<CeremonyState>; tick(): void };
  log: ServiceLog;
  requireCoordinator: RequestHandler;
  requireCsrf: RequestHandler;
  /** BEACON_RPC_URL and BEACON_CONFIRMATIONS; absent or without an endpoint, the beacon is given in the request. */
  beacon?: { rpcUrl: string | undefined; confirmations: number };
}

const phaseBody = z.object({ phase: z.enum(COORDINATOR_PHASES) }).strict();
const removeEntryBody = z.object({ contributorId: z.string().min(1).max(200) }).strict();
const finaliseBody = z
  .object({ beacon: z.string().max(1024).optional(), iterations: z.union([z.number(), z.string()]).optional() })
  .strict();
const announceBody = z
  .object({
    chainId: z.number().int().positive().max(Number.MAX_SAFE_INTEGER),
    blockNumber: z.number().int().nonnegative().max(Number.MAX_SAFE_INTEGER),
    iterations: z.number().int(),
  })
  .strict();

function announcementView(entry: BeaconAnnouncementEntry): BeaconAnnouncementView {
  const { chainId, blockNumber, iterationsExp, time, seq, hash } = entry;
  return { chainId, blockNumber, iterationsExp, time, seq, hash };
}

function parse<T>(schema: z.ZodType<T>, body: unknown): T {
  const parsed = schema.safeParse(body ?? {});
  if (!parsed.success)
    throw new CoordinatorError(
      'request.invalid',
      parsed.error.issues.map((i) => `${i.path.join('.') || 'body'}: ${i.message}`).join('; '),
    );
  return parsed.data;
}

/** Refused while a turn is running or its contribution is being verified: `action` waits for them. */
function refuseWhileTurnsRun(lobby: CoordinatorRouterDeps['lobby'], action: string): void {
  const busy = lobby.activeTurns();
  if (busy.length > 0) {
    throw new CoordinatorError(
      'ceremony.locked',
      `${busy.length} turn(s) are still running or being verified ` +
        `(${busy.map((t) => t.circuit).join(', ')}); ${action} when they are done`,
    );
  }
}

/** The ceremony's end: the beacon's announcement, then finalisation, each refused while a turn runs. */
function addCeremonyEndRoutes(router: Router, deps: CoordinatorRouterDeps, changeGuard: RequestHandler[]): void {
  // Commits the transcript to a future block's hash as the beacon; the ceremony must be closed, no turn running.
  router.post('/api/admin/beacon/announce', ...changeGuard, async (req, res) => {
    const body = parse(announceBody, req.body);
    const rpcUrl = deps.beacon?.rpcUrl;
    if (rpcUrl === undefined)
      throw new CoordinatorError(
        'request.invalid',
        'the coordinator has no BEACON_RPC_URL to check the block against; set it, or announce with ' +
          '`ceremony announce-beacon` on the data folder',
      );
    if (deps.phase.get() !== 'closed')
      throw new CoordinatorError(
        'ceremony.not_closed',
        'close the ceremony before announcing the beacon: the announcement closes contributions for good',
      );
    refuseWhileTurnsRun(deps.lobby, 'announce the beacon');
    const { entry, latestBlock } = await announceBeacon(
      deps.config.dataDir,
      { chainId: body.chainId, blockNumber: body.blockNumber, iterationsExp: body.iterations },
      { rpcUrl },
    );
    deps.log.info('beacon announced', { chainId: body.chainId, blockNumber: body.blockNumber, latestBlock });
    const answer: BeaconAnnounceResult = { announcement: announcementView(entry), latestBlock };
    res.json(answer);
  });

  router.post('/api/admin/finalise', ...changeGuard, async (req, res) => {
    const body = parse(finaliseBody, req.body);
    deps.phase.requireFinalisable();
    const state = await deps.service.ceremonyState();
    // Read (the announced block over RPC) and refused before `finalising`, so a refusal changes no phase.
    const beacon = await finalBeacon(state, {
      beacon: body.beacon,
      iterations: body.iterations,
      rpcUrl: deps.beacon?.rpcUrl,
      confirmations: deps.beacon?.confirmations,
    });
    // A turn still running when the ceremony closed may yet upload; its contribution must not be
    // cut off by the beacon, so finalisation waits for it (or for its deadline).
    refuseWhileTurnsRun(deps.lobby, 'finalise');
    // ceremony.json's minContributions, before the ceremony enters `finalising` (finaliseCeremony
    // checks it again under its lock).
    refuseTooFewContributions(state);
    // closed → finalising in one transaction: a second request, or a phase change, is refused
    // from here on. Persisted, so a stop half-way is seen (and undone) at the next start.
    deps.phase.beginFinalising(deps.clock.now());
    deps.log.info('finalisation started', { iterationsExp: beacon.iterationsExp });
    // Runs to the end even if the client goes away: finalisation is resumable, but a half-done one helps nobody.
    let result: Awaited<ReturnType<typeof finaliseCeremony>>;
    try {
      result = await finaliseCeremony(deps.config.dataDir, beacon);
    } catch (error) {
      deps.phase.endFinalising('failed', deps.clock.now());
      throw error;
    }
    deps.phase.endFinalising('finalised', deps.clock.now());
    deps.log.info('ceremony finalised', { circuits: result.circuits.length });
    res.json({ manifest: result.manifest, circuits: result.circuits });
  });
}

export function createCoordinatorRouter(deps: CoordinatorRouterDeps): Router {
  const router = Router();
  const guard = [deps.requireCoordinator, deps.requireCsrf];
  // A change's body is parsed only once its sender is known to be a coordinator.
  const changeGuard = [...guard, jsonBody()];

  router.get('/api/admin/overview', ...guard, async (_req, res) => {
    const state = await deps.service.ceremonyState();
    const interruptedAt = deps.phase.finalisationInterruptedAt();
    const announced = state.beaconAnnouncement;
    res.json({
      phase: deps.phase.get(),
      ...(interruptedAt === undefined ? {} : { finalisationInterruptedAt: interruptedAt }),
      queues: deps.lobby.queueLengths(),
      activeTurns: deps.lobby.activeTurns(),
      contributionCounts: deps.contributions.counts(),
      verifying: deps.contributions
        .byStatus('verifying')
        .map((c) => ({ id: c.id, circuit: c.circuit, contributor: c.contributorName, since: c.createdAt })),
      heads: deps.config.circuits.map((c) => ({ circuit: c.name, headIndex: state.chains.get(c.name)!.headIndex })),
      minContributions: deps.config.minContributions,
      ...(announced ? { beaconAnnouncement: announcementView(announced) } : {}),
      beaconFromChain: deps.beacon?.rpcUrl !== undefined,
    });
  });

  // The waiting entries (first 500 per circuit) and the turns, for the console's queue table.
  router.get('/api/admin/queue', ...guard, (_req, res) => {
    res.json({ entries: deps.lobby.queueEntries(), activeTurns: deps.lobby.activeTurns() });
  });

  // Takes a stuck contributor out of the lobby (waiting, or holding a turn not yet uploaded); they see why.
  router.post('/api/admin/queue/remove', ...changeGuard, (req, res) => {
    const { contributorId } = parse(removeEntryBody, req.body);
    const removal = deps.lobby.removeEntry(contributorId);
    deps.log.info('lobby entry removed by the coordinator', { contributorId, removal });
    deps.service.tick(); // a freed circuit goes to the next in line now
    res.json({ contributorId, removed: removal });
  });

  router.post('/api/admin/phase', ...changeGuard, async (req, res) => {
    const { phase } = parse(phaseBody, req.body);
    // The announced beacon closed contributions for good: reopening would let a turn choose its key knowing it.
    if (phase === 'open') refuseAfterBeaconAnnouncement(await deps.service.ceremonyState());
    // Refused while finalising (ceremony.locked): reopening would grant turns on chains being sealed.
    res.json({ phase: deps.phase.set(phase, deps.clock.now()) });
  });

  addCeremonyEndRoutes(router, deps, changeGuard);

  return router;
}
