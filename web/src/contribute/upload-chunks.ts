/**
 * How the contribution upload is cut into tus PATCH requests: about 20 per key, between 64 KiB and
 * 8 MiB each, so progress moves smoothly and a dropped connection loses at most one chunk. Its own
 * module (no DOM) so the server benchmark uploads exactly as the app does.
 */
const MIN_CHUNK = 64 * 1024;
const MAX_CHUNK = 8 * 1024 * 1024;

export function chunkSizeFor(size: number): number {
  return Math.min(MAX_CHUNK, Math.max(MIN_CHUNK, Math.ceil(size / 20)));
}
