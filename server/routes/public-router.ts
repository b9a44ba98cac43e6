/**
 * What anyone may read without signing in: health, the ceremony and its circuits, the receipt
 * key, the transcript (these two serialised once per version, with an ETag, and limited per address:
 * cached-json.ts), the manifest (once finalised) and every file an auditor needs: every zkey
 * of every chain (HTTP range requests supported, streamed from disk), the r1cs, the ptau and the
 * final keys; and the head's contribution inputs (its skeleton: what a contribution reads and
 * changes, docs/contribution-delta.md), public like the head itself.
 *
 * Every file is served as immutable under a URL that names its version and takes no query
 * (immutable-download.ts: a year's caching, its hash as a strong ETag), within the download limits
 * of its payer (the client's address; the turn's holder for their own turn's head and inputs): a
 * chain's key by its index, the final files once finalised, the r1cs and the ptau of the
 * ceremony; the head's inputs, which change with every head, at a moving URL that redirects to
 * the URL of the head's own (`…/contribution-inputs/N`).
 * Every path served is built here from a configured circuit name, a parsed index or a checked
 * file name, never from the raw URL, so dot-folders above the data folder are allowed.
 */
import { Router, type Request, type RequestHandler } from 'express';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import type { CeremonyState } from '../../core/ceremony/open-ceremony.ts';
import { findCircuit, type CeremonyConfig } from '../../core/config/ceremony-config.ts';
import { CoordinatorError } from '../../core/errors.ts';
import { DELTA_FORMAT, DELTA_FORMATS } from '../../core/delta/delta-format.ts';
import { HeadInputs } from './head-inputs.ts';
import { byAddress } from '../http/rate-limits.ts';
import {
  type FileHashes,
  immutableRoute,
  sendImmutable,
  type DownloadLimits,
  type DownloadPayer,
} from './immutable-download.ts';
import { healthCheck } from './health-check.ts';
import { CachedJson, sendSerialised } from './cached-json.ts';
import type { Lobby } from '../lobby/lobby.ts';
import type { Principal } from '../auth/principal.ts';
import type { CeremonyPhaseStore } from '../ceremony-phase.ts';
import type { DiskSpace } from '../files/check-disk-space.ts';

export interface PublicRouterDeps {
  config: CeremonyConfig;
  lobby: Lobby;
  phase: CeremonyPhaseStore;
  /** Constraints per circuit, read once from the r1cs at start-up. */
  constraints: ReadonlyMap<string, number>;
  receiptPublicKeyPem: string;
  /** The ceremony on disk, cached until the transcript changes (CeremonyService.ceremonyState). */
  ceremonyState: () => Promise<CeremonyState>;
  /** The upload free-space guard's state (ContributionUploads.diskSpace). */
  diskSpace?: () => Promise<DiskSpace>;
  /** Where a failed free-space check is reported (the answer only says `uploads: null`). */
  log?: { warn(message: string, fields?: Record<string, unknown>): void };
  /** The limits of the file downloads: byte budget, downloads at once (none: unlimited). */
  downloads?: DownloadLimits;
  /**
   * The per-address limit of whole answers of /api/ceremony, /api/transcript and /api/manifest (rate-limits.ts);
   * none: unlimited.
   */
  readLimit?: RequestHandler;
  /** The heads' inputs, prepared by the service as each head is accepted; default: made at the first download. */
  headInputs?: HeadInputs;
  /**
   * A signed-in contributor's download of a circuit's head or inputs: takes their turn, or the
   * circuit's untaken turn on standby (CeremonyService.takeTurn, which reports what changed).
   */
  takeTurn: (contributorId: string, circuit: string) => void;
}

/**
 * Refuses every other spelling of an immutable file's URL than the one the coordinator links to (a
 * letter in another case or percent-encoded, `00` for `0`, a trailing slash): a CDN keys its cache on
 * the URL as written, so each spelling would be another miss that reaches the coordinator.
 */
function requireCanonical(req: Request, canonical: string): void {
  if (req.originalUrl !== canonical)
    throw new CoordinatorError('not_found', `no file at this address; its address is ${canonical}`);
}

function parseIndex(raw: string): number {
  if (!/^\d{1,6}$/.test(raw))
    throw new CoordinatorError(
      'request.invalid',
      `"${raw.length > 20 ? `${raw.slice(0, 20)}…` : raw}" is not a chain index`,
    );
  return Number(raw);
}

export function createPublicRouter(deps: PublicRouterDeps): Router {
  const router = Router();
  const { config } = deps;
  const reads: RequestHandler[] = deps.readLimit ? [deps.readLimit] : [];
  // Serialised once per version: the state object is the reader's, one per transcript version.
  const ceremonyAnswer = new CachedJson();
  const transcriptAnswer = new CachedJson();

  router.get('/healthz', healthCheck({ phase: deps.phase, diskSpace: deps.diskSpace, log: deps.log }));

  router.get('/api/ceremony', ...reads, async (_req, res) => {
    const state = await deps.ceremonyState();
    const queues = deps.lobby.queueLengths();
    const phase = deps.phase.get();
    const version = [state, phase, JSON.stringify(queues)];
    sendSerialised(
      res,
      ceremonyAnswer.of(version, () => ceremonyView(deps, state, phase, queues)),
    );
  });

  // The key receipts are signed with, at a stable address (the same as /api/ceremony's
  // receiptPublicKey), for the receipt check of the public page and `ceremony verify-receipt`;
  // a read like the ceremony's (Express's ETag makes a revalidation a free 304).
  router.get('/api/receipt-key', ...reads, (_req, res) => {
    res.type('application/x-pem-file').send(deps.receiptPublicKeyPem);
  });

  router.get('/api/transcript', ...reads, async (_req, res) => {
    const state = await deps.ceremonyState();
    sendSerialised(
      res,
      transcriptAnswer.of([state], () => ({ ceremony: config.id, entries: state.transcript.entries })),
    );
  });

  router.get('/api/manifest', ...reads, async (_req, res) => {
    const state = await deps.ceremonyState();
    if (!state.finalised)
      throw new CoordinatorError(
        'manifest.not_finalised',
        'the ceremony is not finalised yet; the manifest does not exist',
      );
    res.type('application/json').send(await readFile(state.paths.manifestPath));
  });

  addFileRoutes(router, deps);
  return router;
}

/** GET /api/ceremony's answer. */
function ceremonyView(
  deps: PublicRouterDeps,
  state: CeremonyState,
  phase: ReturnType<CeremonyPhaseStore['get']>,
  queues: Record<string, number>,
): unknown {
  const { config } = deps;
  return {
    id: config.id,
    title: config.title,
    testNetwork: config.testNetwork,
    phase,
    finalised: Boolean(state.finalised),
    receiptPublicKey: deps.receiptPublicKeyPem,
    // What an upload may be: the whole next key, or its skeleton (GET …/contribution-inputs), v2 first.
    contributionFormats: ['zkey', ...DELTA_FORMATS],
    circuits: config.circuits.map((circuit) => {
      const chain = state.chains.get(circuit.name)!;
      return {
        name: circuit.name,
        verifier: circuit.verifier,
        publicInputs: circuit.publicInputs,
        constraints: deps.constraints.get(circuit.name) ?? null,
        contributions: Math.max(chain.headIndex, 0),
        queueLength: queues[circuit.name] ?? 0,
        headIndex: chain.headIndex,
        headHash: chain.head?.fileHash ?? null,
        headContributionHash: chain.head?.type === 'contribution' ? chain.head.contributionHash : null,
        chain: [...(chain.init ? [chain.init] : []), ...chain.contributions].map((entry) => ({
          index: entry.index,
          contributor: entry.type === 'contribution' ? entry.contributor : null,
          contributionHash: entry.type === 'contribution' ? entry.contributionHash : null,
          fileHash: entry.fileHash,
          time: entry.time,
        })),
        final: chain.beacon
          ? {
              contributionHash: chain.beacon.contributionHash,
              fileHash: chain.beacon.fileHash,
              beacon: chain.beacon.beacon,
            }
          : null,
      };
    }),
  };
}

/** Downloads paid by the requester's address. */
const byAddressOf = (req: Request): DownloadPayer => ({ key: byAddress(req), turnHolder: false });

/** The files no turn downloads as its own: the r1cs, the ptau and, once written, the final files. */
function addFixedFileRoutes(router: Router, deps: PublicRouterDeps, hashes: FileHashes, limits: DownloadLimits): void {
  const { config } = deps;
  // The r1cs and the ptau of a ceremony never change once it is initialised (its chains rest on them).
  router.get('/api/circuits/:name/r1cs', ...immutableRoute, async (req, res) => {
    const circuit = findCircuit(config, String(req.params.name));
    requireCanonical(req, `/api/circuits/${encodeURIComponent(circuit.name)}/r1cs`);
    const hash = circuit.r1csHash ?? (await hashes.of(circuit.r1csPath));
    await sendImmutable(req, res, { path: circuit.r1csPath, hash }, limits, byAddressOf(req));
  });

  router.get('/api/ptau', ...immutableRoute, async (req, res) => {
    requireCanonical(req, '/api/ptau');
    const file = { path: config.ptauPath, hash: await hashes.of(config.ptauPath) };
    await sendImmutable(req, res, file, limits, byAddressOf(req));
  });

  // Written once, at finalisation; served only once the ceremony is finalised, and never changed after.
  router.get('/api/final/:file', ...immutableRoute, async (req, res) => {
    const state = await deps.ceremonyState();
    if (!state.finalised) throw new CoordinatorError('manifest.not_finalised', 'the ceremony is not finalised yet');
    const name = String(req.params.file);
    const shown = name.length > 80 ? `${name.slice(0, 80)}…` : name;
    if (!/^[A-Za-z0-9_]+\.(zkey|vkey\.json|sol|json)$/.test(name))
      throw new CoordinatorError('not_found', `no final file "${shown}"`);
    requireCanonical(req, `/api/final/${name}`);
    const file = path.join(state.paths.finalDir, name);
    const finalKey = name.endsWith('.zkey') ? state.chains.get(name.slice(0, -'.zkey'.length))?.beacon : undefined;
    const hash =
      finalKey?.fileHash ??
      (await hashes.of(file).catch((error: NodeJS.ErrnoException) => {
        if (error.code === 'ENOENT') throw new CoordinatorError('not_found', `no final file "${shown}"`);
        throw error;
      }));
    // Its type by its extension, as before.
    await sendImmutable(req, res, { path: file, hash, contentType: null }, limits, byAddressOf(req));
  });
}

/**
 * The file downloads: every file immutable under a URL that names its version, within its payer's
 * download limits (immutable-download.ts). A download by the holder of a circuit's turn takes the
 * turn (the lobby's presence), and its downloads of that circuit's head and inputs are theirs to
 * pay, not their address's; anyone else's is just a download, paid by their address.
 */
function addFileRoutes(router: Router, deps: PublicRouterDeps): void {
  const { config } = deps;
  const takenBy = (req: { principal?: Principal }, circuit: string): void => {
    if (req.principal) deps.takeTurn(req.principal.id, circuit);
  };
  /** The turn's holder pays for their own turn's head; everyone else (and they, for anything else) by address. */
  const payerOfHead = (req: Request & { principal?: Principal }, circuit: string): DownloadPayer => {
    const who = req.principal?.id;
    const holds =
      who !== undefined &&
      deps.lobby
        .activeTurns()
        .some((turn) => turn.state === 'turn' && turn.circuit === circuit && turn.contributorId === who);
    return holds ? { key: `principal:${who}`, turnHolder: true } : byAddressOf(req);
  };
  const { skeletons, hashes } = deps.headInputs ?? new HeadInputs(config);
  const limits: DownloadLimits = deps.downloads ?? {};

  router.get('/api/circuits/:name/zkeys/:index', ...immutableRoute, async (req, res) => {
    const circuit = findCircuit(config, String(req.params.name));
    const index = parseIndex(String(req.params.index));
    requireCanonical(req, `/api/circuits/${encodeURIComponent(circuit.name)}/zkeys/${index}`);
    takenBy(req, circuit.name);
    const state = await deps.ceremonyState();
    const chain = state.chains.get(circuit.name)!;
    const entry = index === 0 ? chain.init : chain.contributions.find((c) => c.index === index);
    if (index > chain.headIndex || !entry) {
      throw new CoordinatorError(
        'not_found',
        `${circuit.name} has no contribution ${index}; its head is ${chain.headIndex}`,
      );
    }
    const payer = index === chain.headIndex ? payerOfHead(req, circuit.name) : byAddressOf(req);
    // Committed by its transcript entry, a chain's key never changes: its index is its version.
    const file = { path: state.paths.zkeyPath(circuit.name, index), hash: entry.fileHash };
    await sendImmutable(req, res, file, limits, payer);
  });

  // The moving URL: the current head's inputs are at the URL of that head's own. Not counted per
  // address: constant work at the floor of any request, and a turn behind a shared NAT needs it.
  // Asking for the inputs takes the turn here, a hop before their own URL; and before the state's
  // read, which waits on the file system behind every download under way (tens to hundreds of ms
  // on a busy machine), as a zkey's download takes it before that read.
  router.get('/api/circuits/:name/contribution-inputs', async (req, res) => {
    const circuit = findCircuit(config, String(req.params.name));
    takenBy(req, circuit.name);
    const chain = (await deps.ceremonyState()).chains.get(circuit.name)!;
    res.setHeader('Cache-Control', 'no-store');
    res.setHeader('X-Chain-Head', String(chain.headIndex));
    res.redirect(302, `/api/circuits/${encodeURIComponent(circuit.name)}/contribution-inputs/${chain.headIndex}`);
  });

  router.get('/api/circuits/:name/contribution-inputs/:index', ...immutableRoute, async (req, res) => {
    const circuit = findCircuit(config, String(req.params.name));
    const index = parseIndex(String(req.params.index));
    requireCanonical(req, `/api/circuits/${encodeURIComponent(circuit.name)}/contribution-inputs/${index}`);
    takenBy(req, circuit.name);
    const chain = (await deps.ceremonyState()).chains.get(circuit.name)!;
    if (index > chain.headIndex) {
      throw new CoordinatorError(
        'not_found',
        `${circuit.name} has no contribution ${index}; its head is ${chain.headIndex}`,
      );
    }
    if (index < chain.headIndex) {
      // Only the head's inputs are kept: a contribution on an older head could not be taken.
      throw new CoordinatorError(
        'delta.stale_head',
        `contribution ${index} is no longer the head of ${circuit.name} (the head is contribution ` +
          `${chain.headIndex}); download the head's inputs (GET /api/circuits/${circuit.name}/contribution-inputs)`,
      );
    }
    const skeleton = await skeletons.skeletonOf(circuit.name, index);
    const file = {
      path: skeleton,
      hash: await hashes.of(skeleton),
      headers: { 'X-Chain-Head': String(index), 'X-Contribution-Format': DELTA_FORMAT },
    };
    await sendImmutable(req, res, file, limits, payerOfHead(req, circuit.name));
  });

  addFixedFileRoutes(router, deps, hashes, limits);
}
