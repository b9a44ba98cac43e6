/**
 * Contribution uploads over the resumable tus protocol (@tus/server, FileStore), one endpoint per
 * circuit at /api/circuits/:name/contributions. Only the signed-in holder of the turn on that
 * circuit may create an upload, and only its owner may resume it (PATCH/HEAD) while the turn
 * lasts. The upload streams to a file in the data folder with a size limit derived from the head
 * (a valid next link is the head plus one small MPC record); nothing is held in memory. When the
 * last byte arrives the file is handed to the ceremony service, which hashes and verifies it.
 *
 * Nothing stays behind: an upload that cannot finish any more (older than the longest turn) is
 * deleted by tus's expiration sweep, and a finished upload the service does not take (the turn
 * ended while it was being checked) is deleted at once. Each can be hundreds of MB.
 */
import path from 'node:path';
import { stat } from 'node:fs/promises';
import type { IncomingMessage } from 'node:http';
import type { Request, RequestHandler, Response } from 'express';
import { Server as TusServer } from '@tus/server';
import { FileStore } from '@tus/file-store';
import { ceremonyPaths } from '../../core/chain/ceremony-paths.ts';
import { CoordinatorError } from '../../core/errors.ts';
import type { CeremonyConfig } from '../../core/config/ceremony-config.ts';
import type { Principal } from '../auth/principal.ts';
import type { Lobby } from '../lobby/lobby.ts';
import type { CeremonyService } from '../ceremony-service.ts';

/** Room for the one new MPC record (≈ 450 bytes plus a name of up to 64) over the head's size. */
const NEXT_LINK_SLACK_BYTES = 64 * 1024;
/** How often unfinished uploads past their expiry are looked for. */
const EXPIRY_SWEEP_MS = 60_000;

export function uploadsDir(config: CeremonyConfig): string {
  return path.join(config.dataDir, 'uploads');
}

interface UploadDeps {
  config: CeremonyConfig;
  lobby: Lobby;
  service: CeremonyService;
  /** Told when an upload received its last byte, `durationMs` after it was created (metrics). */
  onUploadFinished?: (circuit: string, durationMs: number) => void;
}

function tusError(error: CoordinatorError): { status_code: number; body: string } {
  return { status_code: error.httpStatus, body: JSON.stringify(error.toJSON()) };
}

/** The Express request behind a tus request (srvx wraps the Node request; Express decorated it). */
function principalOf(request: { runtime?: { node?: { req?: IncomingMessage } } }): Principal | undefined {
  return (request.runtime?.node?.req as (IncomingMessage & { principal?: Principal }) | undefined)?.principal;
}

function createCircuitUploadServer(circuit: string, deps: UploadDeps): TusServer {
  const directory = path.join(uploadsDir(deps.config), circuit);
  // Margin over the longest turn, so an upload is never removed under a turn that is still running.
  const datastore = new FileStore({ directory, expirationPeriodInMilliseconds: deps.lobby.longestTurnMs + EXPIRY_SWEEP_MS });
  const paths = ceremonyPaths(deps.config.dataDir);
  const server = new TusServer({
    path: `/api/circuits/${circuit}/contributions`,
    datastore,
    relativeLocation: true,
    maxSize: async () => {
      const headIndex = await deps.service.headIndex(circuit);
      return (await stat(paths.zkeyPath(circuit, headIndex))).size + NEXT_LINK_SLACK_BYTES;
    },
    onIncomingRequest: async (request, uploadId) => {
      const principal = principalOf(request as never);
      if (!principal) throw tusError(new CoordinatorError('auth.required', 'sign in before uploading a contribution'));
      try {
        deps.lobby.requireTurn(principal.id, circuit);
      } catch (error) {
        if (error instanceof CoordinatorError) throw tusError(error);
        throw error;
      }
      if (request.method !== 'POST' && uploadId) {
        const upload = await datastore.getUpload(uploadId).catch(() => undefined);
        if (upload && upload.metadata?.contributor !== principal.id) {
          throw tusError(new CoordinatorError('lobby.not_your_turn', 'this upload belongs to another contributor'));
        }
      }
    },
    onUploadCreate: async (request, upload) => {
      const principal = principalOf(request as never)!;
      return { metadata: { ...upload.metadata, contributor: principal.id, circuit } };
    },
    onUploadFinish: async (request, upload) => {
      const principal = principalOf(request as never)!;
      if (upload.creation_date) deps.onUploadFinished?.(circuit, Date.now() - Date.parse(upload.creation_date));
      try {
        const row = await deps.service.submit({ principal, circuit, path: path.join(directory, upload.id), size: upload.size ?? upload.offset });
        return { status_code: 204, headers: { 'X-Contribution-Id': row.id } };
      } catch (error) {
        await datastore.remove(upload.id).catch(() => {});
        if (error instanceof CoordinatorError) throw tusError(error);
        throw error;
      }
    },
    onResponseError: (_request, error) => {
      if ('status_code' in error) return undefined;
      return { status_code: 500, body: JSON.stringify({ error: { code: 'upload.failed', message: error.message } }) };
    },
  });
  return server;
}

/**
 * Express handler for every upload route. The session middleware runs before it (it sets
 * `req.principal`); the turn and ownership checks run inside tus's hooks so they also guard
 * every resumed PATCH.
 */
export function createContributionUploadHandler(deps: UploadDeps): RequestHandler {
  const servers = new Map(deps.config.circuits.map((c) => [c.name, createCircuitUploadServer(c.name, deps)]));
  // Unreferenced: the sweep must never keep a stopped coordinator (or a test) alive.
  setInterval(() => {
    for (const server of servers.values()) void server.cleanUpExpiredUploads().catch(() => {});
  }, EXPIRY_SWEEP_MS).unref();
  return async (req: Request, res: Response) => {
    const server = servers.get(String(req.params.name));
    if (!server) throw new CoordinatorError('circuit.unknown', `unknown circuit "${req.params.name}"`);
    await server.handle(req, res);
  };
}
