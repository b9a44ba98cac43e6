/**
 * `GET /healthz`, unauthenticated and unlimited (load balancers and uptime checks call it often):
 * the phase, and whether uploads are taken. Whether they are taken needs the disk's free space and
 * every upload folder's bytes under way, so it is worked out at most once per `HEALTH_FRESH_MS`,
 * and calls meanwhile (any number, at once or not) share that answer: a call costs the same
 * whatever the uploads or the number of callers.
 *
 * A full disk stops uploads, not the coordinator: `ok` stays true, `uploads.accepting` says
 * whether uploads are taken. The byte figures are in /metrics only (behind its token): how close
 * the disk is to the guard would tell an attacker how much to upload to stop uploads.
 */
import type { RequestHandler } from 'express';
import type { DiskSpace } from '../files/check-disk-space.ts';

/** How long an answer about the uploads' disk stays the answer. */
const HEALTH_FRESH_MS = 5000;

export interface HealthCheckDeps {
  phase: { get(): string };
  /** The upload free-space guard's state (ContributionUploads.diskSpace); absent: not reported. */
  diskSpace?: () => Promise<DiskSpace>;
  /** Where a failed free-space check is reported (the answer only says `uploads: null`). */
  log?: { warn(message: string, fields?: Record<string, unknown>): void };
  /** Monotonic milliseconds (performance.now by default). */
  now?: () => number;
}

export function healthCheck(deps: HealthCheckDeps): RequestHandler {
  const now = deps.now ?? (() => performance.now());
  let last: { at: number; uploads: Promise<{ accepting: boolean } | null> } | undefined;
  const uploadsState = (): Promise<{ accepting: boolean } | null> | undefined => {
    if (!deps.diskSpace) return undefined;
    if (!last || now() - last.at >= HEALTH_FRESH_MS) {
      last = { at: now(), uploads: acceptingOrNull(deps.diskSpace, deps.log) };
    }
    return last.uploads;
  };
  return async (_req, res) => {
    const pending = uploadsState();
    const uploads = pending === undefined ? undefined : await pending;
    res.setHeader('Cache-Control', 'no-store');
    res.json({ ok: true, phase: deps.phase.get(), ...(uploads === undefined ? {} : { uploads }) });
  };
}

async function acceptingOrNull(
  diskSpace: () => Promise<DiskSpace>,
  log: HealthCheckDeps['log'],
): Promise<{ accepting: boolean } | null> {
  try {
    return { accepting: (await diskSpace()).accepting };
  } catch (error) {
    log?.warn('free-space check failed', { code: (error as NodeJS.ErrnoException).code ?? (error as Error).name });
    return null;
  }
}
