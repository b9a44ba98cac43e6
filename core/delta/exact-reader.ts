/**
 * Exact-length reads over a byte stream (a fetch body), whatever the sizes of the chunks the
 * network delivers: `readInto(view)` fills the view, or fails if the stream ends first. Where the
 * body is a byte stream (Chromium, Firefox), the network writes straight into the caller's buffer
 * (a BYOB reader), so a download of hundreds of MB leaves no garbage behind it; elsewhere chunks
 * are copied in. Nothing is read ahead of what is asked for, so the stream's own backpressure
 * (TCP) holds the sender back while the reader is not asking: the download never runs far ahead
 * of the work.
 */
export class StreamEndedError extends Error {}

export class ExactReader {
  private readonly byob: ReadableStreamBYOBReader | undefined;
  private readonly chunks: ReadableStreamDefaultReader<Uint8Array> | undefined;
  private pending: Uint8Array | undefined;
  /** Bytes taken from the stream so far. */
  received = 0;

  constructor(
    body: ReadableStream<Uint8Array>,
    private readonly onBytes: (received: number) => void = () => {},
  ) {
    try {
      this.byob = body.getReader({ mode: 'byob' });
    } catch {
      this.chunks = body.getReader();
    }
  }

  /** A fresh array of `length` bytes from the stream. */
  read(length: number): Promise<Uint8Array> {
    return this.readInto(new Uint8Array(length));
  }

  /**
   * Fills `view` from the stream and returns it, on the same memory but, with a BYOB reader, a
   * new ArrayBuffer (the old one is detached by the transfer): use the returned view.
   */
  async readInto(view: Uint8Array): Promise<Uint8Array> {
    const length = view.byteLength;
    if (this.byob) {
      let buffer = view.buffer as ArrayBuffer;
      const start = view.byteOffset;
      for (let filled = 0; filled < length;) {
        const { done, value } = await this.byob.read(new Uint8Array(buffer, start + filled, length - filled));
        if (done || !value) throw new StreamEndedError(`the stream ended ${length - filled} bytes short`);
        buffer = value.buffer as ArrayBuffer;
        filled += value.byteLength;
        this.count(value.byteLength);
      }
      return new Uint8Array(buffer, start, length);
    }
    for (let filled = 0; filled < length;) {
      if (!this.pending || this.pending.byteLength === 0) {
        const { done, value } = await this.chunks!.read();
        if (done) throw new StreamEndedError(`the stream ended ${length - filled} bytes short`);
        this.pending = value;
        this.count(value.byteLength);
      }
      const take = Math.min(length - filled, this.pending.byteLength);
      view.set(this.pending.subarray(0, take), filled);
      this.pending = this.pending.subarray(take);
      filled += take;
    }
    return view;
  }

  /** True once every byte the stream had has been read (it reads one byte further to know). */
  async atEnd(): Promise<boolean> {
    if (this.pending && this.pending.byteLength > 0) return false;
    const { done, value } = this.byob ? await this.byob.read(new Uint8Array(1)) : await this.chunks!.read();
    if (done) return true;
    this.count(value?.byteLength ?? 0);
    return (value?.byteLength ?? 0) === 0 ? this.atEnd() : false;
  }

  cancel(): void {
    void (this.byob ?? this.chunks)!.cancel().catch(() => {});
  }

  private count(bytes: number): void {
    this.received += bytes;
    this.onBytes(this.received);
  }
}
