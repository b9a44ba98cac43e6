/**
 * A tus-js-client file source over bytes made while the upload runs (streamed-delta.ts): tus asks
 * for [start, end) windows in order, and this source fills one buffer of two upload chunks from
 * the producer's pieces, copying each piece once and handing it back (`release`) for reuse. The
 * window tus last asked for stays in the buffer until it asks for a later one, so a dropped request
 * is resent from the coordinator's offset without asking the producer again. Windows are views of
 * the one buffer: XMLHttpRequest copies a body when it is sent, so the next window may overwrite it.
 */
import { DELTA_FORMAT } from './delta-format.ts';

export interface PieceSource {
  /** The next piece in order, or undefined at the end. */
  next(): Promise<Uint8Array | undefined>;
  /** A piece fully copied out; its memory may be reused. */
  release(piece: Uint8Array): void;
}

export class StreamedUploadSource {
  private readonly buffer: Uint8Array;
  /** Offset in the upload of buffer[0]. */
  private bufferStart = 0;
  private length = 0;
  private piece: Uint8Array | undefined;
  private pieceAt = 0;
  private ended = false;

  constructor(
    private readonly pieces: PieceSource,
    readonly size: number,
    chunkSize: number,
  ) {
    this.buffer = new Uint8Array(2 * chunkSize);
  }

  async slice(start: number, end: number): Promise<{ value: Uint8Array | null; done: boolean }> {
    const held = this.bufferStart + this.length;
    if (start < this.bufferStart || (start > held && !this.ended))
      throw new Error(`the upload asked for bytes from ${start}, outside what this turn holds`);
    const drop = Math.min(start - this.bufferStart, this.length);
    this.buffer.copyWithin(0, drop, this.length);
    this.length -= drop;
    this.bufferStart += drop;
    const want = Math.min(end - start, this.buffer.byteLength);
    while (this.length < want && !this.ended) {
      if (!this.piece) {
        this.piece = await this.pieces.next();
        this.pieceAt = 0;
        if (!this.piece) {
          this.ended = true;
          break;
        }
      }
      const take = Math.min(this.piece.byteLength - this.pieceAt, this.buffer.byteLength - this.length);
      this.buffer.set(this.piece.subarray(this.pieceAt, this.pieceAt + take), this.length);
      this.length += take;
      this.pieceAt += take;
      if (this.pieceAt === this.piece.byteLength) {
        this.pieces.release(this.piece);
        this.piece = undefined;
      }
    }
    const count = Math.min(want, this.length);
    return { value: count > 0 ? this.buffer.subarray(0, count) : null, done: this.ended && count === this.length };
  }

  close(): void {}
}

/**
 * A failed tus request worth retrying: the connection (no status), a locked upload (423) or a
 * server error. 4xx refusals (not your turn, stale head, malformed) are answers, not glitches.
 */
export function isRetryableUploadStatus(status: number): boolean {
  return status === 0 || status === 423 || status >= 500;
}

/**
 * The tus options of a streamed delta's upload, for both clients: its bytes come from `source` as
 * they are made (the Upload's input, a Blob, only satisfies its type), its exact length is declared
 * at creation with the head it was made on, and it goes in windows of `chunkSize`.
 */
export function streamedUploadOptions(
  source: StreamedUploadSource,
  circuit: string,
  headIndex: number,
  chunkSize: number,
) {
  return {
    fileReader: { openFile: async () => source },
    metadata: { filename: `${circuit}.zkey`, format: DELTA_FORMAT, head: String(headIndex) },
    uploadSize: source.size,
    chunkSize,
    // Nothing to resume after a restart: the contribution is made afresh, with a new secret.
    storeFingerprintForResuming: false,
  };
}
