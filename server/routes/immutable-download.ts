/**
 * How the coordinator serves a file that never changes under its URL (a chain's key by index, a
 * head's skeleton by index, the final files once finalised, the r1cs, the ptau): with
 * `Cache-Control: public, max-age=31536000, immutable` and a strong ETag (the file's BLAKE2b-512,
 * as the transcript records keys), so a CDN or a browser in front serves repeated downloads and
 * revalidates with a 304; with HTTP ranges; within its payer's download budget
 * (server/http/download-budget.ts), the length it will send reserved before its first byte; and
 * within the downloads a payer, and everyone, may have in progress at once
 * (server/http/download-slots.ts). The payer is the client's address, or the turn's holder for
 * their own turn's head and inputs (public-router.ts), so an address shared with others (a NAT)
 * cannot stop a turn.
 *
 * The browser app's files count against their address's byte budget too (withinDownloadBudget),
 * though they are not immutable.
 *
 * Such a URL takes no query string (`400 request.query_not_allowed`): a CDN keys its cache on the
 * whole URL, so `?1`, `?2`, … would each miss it and reach the coordinator. A refusal on such a
 * route (a query, not found, not finalised, over budget) is sent `no-store`: only the file itself
 * may be kept.
 */
import { stat } from 'node:fs/promises';
import type { Request, RequestHandler, Response } from 'express';
import { CoordinatorError } from '../../core/errors.ts';
import { hashFile } from '../../core/crypto/file-hash.ts';
import type { DownloadBudget } from '../http/download-budget.ts';
import type { DownloadSlots } from '../http/download-slots.ts';
import { byAddress } from '../http/rate-limits.ts';

const IMMUTABLE_CACHE_CONTROL = 'public, max-age=31536000, immutable';

/**
 * The bytes a GET will send: the range asked for when it is one plain range within the file that
 * send (Express's file sending) will honour, else all of it. send ignores the range unless an
 * If-Range names this file's ETag (or a date not before its modification), so an If-Range that is
 * not exactly the ETag plans the whole file; what is planned too much is given back.
 */
function plannedBytes(req: Request, size: number, etag: string): number {
  const ifRange = req.get('If-Range');
  if (ifRange !== undefined && ifRange.trim() !== etag) return size;
  const match = /^bytes=(\d*)-(\d*)$/.exec(req.headers.range?.trim() ?? '');
  if (!match || (match[1] === '' && match[2] === '')) return size;
  if (match[1] === '') return Math.min(size, Number(match[2])); // the last N bytes
  const start = Number(match[1]);
  const end = match[2] === '' ? size - 1 : Math.min(size - 1, Number(match[2]));
  return start < size && end >= start ? end - start + 1 : size;
}

/**
 * The hashes of files served without a hash on record (r1cs, ptau, verifiers, verification
 * keys, skeletons), computed once per file version (path, inode, size, modification time).
 */
export class FileHashes {
  private readonly known = new Map<string, Promise<string>>();

  async of(file: string): Promise<string> {
    const { ino, size, mtimeMs } = await stat(file);
    const key = `${file}\0${ino}\0${size}\0${mtimeMs}`;
    let hash = this.known.get(key);
    if (!hash) {
      hash = hashFile(file);
      hash.catch(() => this.known.delete(key));
      this.known.set(key, hash);
    }
    return hash;
  }
}

/**
 * The first handlers of an immutable route: its answer is `no-store` until it is known to be the
 * file (refusals stay uncached), and a URL with a query string is refused before any work.
 */
export const immutableRoute: RequestHandler[] = [
  (_req, res, next) => {
    res.setHeader('Cache-Control', 'no-store');
    next();
  },
  (req, _res, next) => {
    if (!req.originalUrl.includes('?')) return next();
    throw new CoordinatorError(
      'request.query_not_allowed',
      'this file’s URL takes no query string (each query would be another copy in the caches in front of the ' +
        'coordinator); ask for it without one',
    );
  },
];

export interface ImmutableFile {
  path: string;
  /** The file's hash (hex), its strong ETag. */
  hash: string;
  /** Default application/octet-stream; null: by its extension. */
  contentType?: string | null;
  /** Extra headers of this version (e.g. X-Chain-Head of a skeleton: constant for its URL). */
  headers?: Record<string, string>;
}

/** The limits of the file downloads (none: unlimited). */
export interface DownloadLimits {
  /** Bytes per payer per window. */
  budget?: DownloadBudget;
  /** Downloads in progress at once, per payer and in all. */
  slots?: DownloadSlots;
}

/** Who a download is counted against: a client address, or a turn's holder (`principal:ID`) for their turn. */
export interface DownloadPayer {
  key: string;
  turnHolder: boolean;
}

/**
 * Sends `file` as an immutable download, counted against `payer`'s slots and budget. Resolves once
 * the response has ended.
 */
export async function sendImmutable(
  req: Request,
  res: Response,
  file: ImmutableFile,
  limits: DownloadLimits,
  payer: DownloadPayer,
): Promise<void> {
  // Taken before the first await, so parallel requests cannot all pass on the same count.
  const release = limits.slots?.take(payer.key, payer.turnHolder);
  try {
    await sendWithinBudget(req, res, file, limits.budget, payer.key);
  } finally {
    release?.();
  }
}

async function sendWithinBudget(
  req: Request,
  res: Response,
  file: ImmutableFile,
  budget: DownloadBudget | undefined,
  payer: string,
): Promise<void> {
  const size = (await stat(file.path)).size;
  const etag = `"${file.hash}"`;
  const reserved = req.method === 'HEAD' ? 0 : plannedBytes(req, size, etag);
  let window: string | undefined;
  if (budget && reserved > 0) {
    const reservation = await budget.reserve(payer, reserved);
    if (!reservation.granted) throw overBudget(budget, payer, reservation.retryAfterSeconds);
    window = reservation.window;
  }
  const writtenAtStart = req.socket.bytesWritten;
  res.setHeader('Cache-Control', IMMUTABLE_CACHE_CONTROL);
  res.setHeader('ETag', etag);
  for (const [name, value] of Object.entries(file.headers ?? {})) res.setHeader(name, value);
  try {
    await new Promise<void>((resolve, reject) => {
      res.sendFile(
        file.path,
        {
          ...(file.contentType === null
            ? {}
            : { headers: { 'Content-Type': file.contentType ?? 'application/octet-stream' } }),
          dotfiles: 'allow',
        },
        (error) => (error && !res.headersSent ? reject(error) : resolve()),
      );
    });
  } catch (error) {
    // Answered as a refusal (a range outside the file, say): not the file, so not to be kept.
    res.setHeader('Cache-Control', 'no-store');
    res.removeHeader('ETag');
    throw error;
  } finally {
    if (budget) {
      const sent = res.statusCode === 304 ? 0 : bodyBytesSent(req, res, writtenAtStart);
      await settle(budget, payer, reserved, sent, window);
    }
  }
}

/**
 * The byte budget for files served by someone else (the browser app's files, by express.static,
 * which are not immutable under their URLs): refused once the client address's budget is spent, and
 * charged with what was sent once the answer ends. Not the downloads at once: a page asks for its
 * dozen files together (all at once over HTTP/2 through the proxy), and each is small. Middleware in
 * front of the files' handler; a request that is not a file (the handler passes it on) costs nothing.
 */
export function withinDownloadBudget(budget: DownloadBudget | undefined): RequestHandler {
  return async (req, res, next) => {
    if (!budget || req.method !== 'GET') return next();
    const payer = byAddress(req);
    // Its size is the handler's to know: one byte is reserved, which refuses an address whose budget is spent.
    const reservation = await budget.reserve(payer, 1);
    if (!reservation.granted) throw overBudget(budget, payer, reservation.retryAfterSeconds);
    const writtenAtStart = req.socket.bytesWritten;
    res.once('close', () => {
      const sent = res.statusCode === 304 ? 0 : bodyBytesSent(req, res, writtenAtStart);
      void settle(budget, payer, 1, sent, reservation.window).catch(() => undefined);
    });
    next();
  };
}

function overBudget(budget: DownloadBudget, payer: string, retryAfterSeconds: number): CoordinatorError {
  const { bytes, windowMs } = budget.config;
  return new CoordinatorError(
    'rate.limited',
    `${payer.startsWith('principal:') ? 'you have' : 'this address has'} downloaded its budget from the ` +
      `coordinator (${formatBytes(bytes)} per ${formatDuration(windowMs)}); try again in ` +
      `${retryAfterSeconds} s, or download through the ceremony’s mirror`,
    { retryAfterSeconds },
  );
}

/**
 * Squares the reservation with what was sent: what was not sent (a 304, a range refused, a client
 * gone) goes back to the window it was reserved in, and what was sent beyond it is charged, so a
 * request the planning got wrong still counts every byte it took.
 */
async function settle(
  budget: DownloadBudget,
  payer: string,
  reserved: number,
  sent: number,
  window: string | undefined,
): Promise<void> {
  if (sent < reserved && window !== undefined) await budget.giveBack(payer, reserved - sent, window);
  else if (sent > reserved) await budget.charge(payer, sent - reserved);
}

/** Bytes of the response's body on the wire: the socket's since the response began, less its header block. */
function bodyBytesSent(req: Request, res: Response, writtenAtStart: number): number {
  const headerBytes = Buffer.byteLength((res as Response & { _header?: string | null })._header ?? '');
  return Math.max(0, req.socket.bytesWritten - writtenAtStart - headerBytes);
}

function formatBytes(bytes: number): string {
  const gib = bytes / 1024 ** 3;
  return gib >= 1 ? `${Number(gib.toFixed(1))} GiB` : `${Math.round(bytes / 1024 ** 2)} MiB`;
}

function formatDuration(ms: number): string {
  const hours = ms / 3_600_000;
  return hours >= 1 ? `${Number(hours.toFixed(1))} h` : `${Math.round(ms / 60_000)} min`;
}
