/**
 * How the coordinator shares out its file descriptors: every socket (a request, an idle keep-alive
 * connection, a presence stream) and every open file (a download's, an upload's, SQLite's) takes
 * one, and past the process's soft limit of open files every open fails (EMFILE) — the database's
 * and the uploads' included. Node raises the soft limit to the hard one at start, so the real figure
 * is read from /proc/self/limits (1024, the usual soft limit, where it cannot be read), not assumed.
 *
 * From it: a reserve for the process's own files (the database, Redis, the verifier's pipes, the
 * uploads under way, sign-in requests to GitHub); downloads at once (each a socket and a file);
 * connections at once (`server.maxConnections`: beyond, a new connection is closed at once rather
 * than taking a descriptor the files need); and presence streams, half of the connections.
 */
import { readFileSync } from 'node:fs';

/** The usual soft limit of open files, assumed where the real one cannot be read. */
const ASSUMED_SOFT_LIMIT = 1024;
/** Descriptors kept for the process's own files and connections out. */
const RESERVED = 256;
/** Past these, memory (tens of kB per socket) rather than descriptors is what runs out first. */
const MOST_DOWNLOADS = 2000;
const MOST_CONNECTIONS = 50_000;
const MOST_PRESENCE_STREAMS = 10_000;
/** The fewest of each, on a process whose limit is too low to share out. */
const FLOOR = 16;

export interface DescriptorBudget {
  /** The soft limit of open files the shares come from, and where it came from. */
  softLimit: number;
  source: 'proc' | 'assumed';
  /** Downloads of files at once, all clients together (each holds a socket and a file). */
  maxDownloads: number;
  /** Connections at once (server.maxConnections). */
  maxConnections: number;
  /** Presence streams at once (each holds a connection for as long as a page is open). */
  maxPresenceStreams: number;
}

/** The soft limit of open files of this process, from /proc/self/limits' "Max open files" line. */
function readOpenFilesSoftLimit(limitsFile = '/proc/self/limits'): number | undefined {
  try {
    const line = readFileSync(limitsFile, 'utf8')
      .split('\n')
      .find((l) => l.startsWith('Max open files'));
    const soft = line?.slice('Max open files'.length).trim().split(/\s+/)[0];
    if (soft === 'unlimited') return Number.MAX_SAFE_INTEGER;
    return soft !== undefined && /^\d+$/.test(soft) ? Number(soft) : undefined;
  } catch {
    return undefined;
  }
}

/** The shares of a soft limit (the real one by default). */
export function descriptorBudget(softLimit = readOpenFilesSoftLimit()): DescriptorBudget {
  const limit = softLimit ?? ASSUMED_SOFT_LIMIT;
  const usable = Math.max(0, limit - RESERVED);
  // A download holds two descriptors (its socket, counted among the connections, and its file).
  const maxDownloads = Math.max(FLOOR, Math.min(MOST_DOWNLOADS, Math.floor(usable / 8)));
  const maxConnections = Math.max(FLOOR, Math.min(MOST_CONNECTIONS, usable - maxDownloads));
  const maxPresenceStreams = Math.max(FLOOR, Math.min(MOST_PRESENCE_STREAMS, Math.floor(maxConnections / 2)));
  return {
    softLimit: limit,
    source: softLimit === undefined ? 'assumed' : 'proc',
    maxDownloads,
    maxConnections,
    maxPresenceStreams,
  };
}
