/**
 * Downloads one zkey of a chain with byte-level progress (streamed; the total from Content-Length).
 * A chain's key never changes under its index (the coordinator serves it immutable), so the
 * browser's cache, or a CDN's, may answer.
 */
import { ApiError, apiErrorFromBody } from '../../../client/api-client.ts';

export async function downloadZkey(
  circuit: string,
  index: number,
  onProgress: (loaded: number, total: number | null) => void,
  signal: AbortSignal,
): Promise<Uint8Array> {
  const response = await networkStep(signal, () =>
    fetch(`/api/circuits/${encodeURIComponent(circuit)}/zkeys/${index}`, { signal }),
  );
  if (!response.ok || !response.body) {
    const text = await networkStep(signal, () => response.text());
    throw apiErrorFromBody(response.status, text);
  }
  const length = Number(response.headers.get('content-length'));
  const total = Number.isFinite(length) && length > 0 ? length : null;
  const buffer = new GrowableBytes(total ?? 0);
  onProgress(0, total);
  const reader = response.body.getReader();
  for (;;) {
    const { done, value } = await networkStep(signal, () => reader.read());
    if (done) break;
    buffer.append(value);
    onProgress(buffer.length, total);
  }
  return buffer.bytes();
}

/**
 * A failed fetch or body read is the connection, not the server: it becomes the same
 * `network` ApiError the API client raises, so the page words it the same way. An abort is
 * the caller's own doing and is passed on untouched.
 */
async function networkStep<T>(signal: AbortSignal, step: () => Promise<T>): Promise<T> {
  try {
    return await step();
  } catch (error) {
    if (signal.aborted || (error instanceof DOMException && error.name === 'AbortError')) throw error;
    throw new ApiError(0, 'network', (error as Error).message ?? String(error));
  }
}

/**
 * The download's bytes, written straight into one array sized from Content-Length, so a key of
 * hundreds of MB is not held twice (chunks plus their concatenation) at the peak. It grows only
 * if the server sends more than it announced (or announced nothing).
 */
class GrowableBytes {
  private data: Uint8Array;
  length = 0;

  constructor(expected: number) {
    this.data = new Uint8Array(expected);
  }

  append(chunk: Uint8Array): void {
    const needed = this.length + chunk.byteLength;
    if (needed > this.data.byteLength) {
      const grown = new Uint8Array(Math.max(needed, this.data.byteLength * 2, 1 << 20));
      grown.set(this.data.subarray(0, this.length));
      this.data = grown;
    }
    this.data.set(chunk, this.length);
    this.length = needed;
  }

  /** The bytes received; the same array when the announced length was right (no copy). */
  bytes(): Uint8Array {
    return this.length === this.data.byteLength ? this.data : this.data.slice(0, this.length);
  }
}
