/**
 * A sequential reader over one section of a binary file, in 4 MiB reads: what the audit streams
 * (the r1cs constraints, a key's coefficients) is never held whole. Views it hands out stay valid
 * until the next `ensure`.
 */
import type { FileHandle } from 'node:fs/promises';
import { CoordinatorError } from '../errors.ts';
import type { SectionLocation } from './section-table.ts';

const READ_BYTES = 4 << 20;

export class SectionReader {
  private buffer = Buffer.alloc(0);
  private at = 0;
  private position: number;
  private readonly end: number;

  /** `what` names the section in errors (`chain.file_unreadable` when it ends too early). */
  constructor(
    private readonly handle: FileHandle,
    section: SectionLocation,
    private readonly what: string,
  ) {
    this.position = section.offset;
    this.end = section.offset + section.size;
  }

  /** Bytes not yet taken, read or not. */
  get remaining(): number {
    return this.end - this.position + (this.buffer.length - this.at);
  }

  /** Makes the next `n` bytes available to takeNow (one await per batch, not per item). */
  async ensure(n: number): Promise<void> {
    if (this.buffer.length - this.at >= n) return;
    const keep = this.buffer.subarray(this.at);
    const length = Math.min(Math.max(n - keep.length, READ_BYTES), this.end - this.position);
    if (keep.length + length < n) throw new CoordinatorError('chain.file_unreadable', `${this.what} ends too early`);
    const next = Buffer.alloc(keep.length + length);
    keep.copy(next, 0);
    let done = 0;
    while (done < length) {
      const { bytesRead } = await this.handle.read(next, keep.length + done, length - done, this.position + done);
      if (bytesRead === 0)
        throw new CoordinatorError('chain.file_unreadable', `${this.what} could not be read completely`);
      done += bytesRead;
    }
    this.position += length;
    this.buffer = next;
    this.at = 0;
  }

  /** The bytes read but not yet taken (a view valid until the next ensure). */
  peek(): Buffer {
    return this.buffer.subarray(this.at);
  }

  /** The next `n` bytes, made available by ensure (a view valid until the next ensure). */
  takeNow(n: number): Buffer {
    if (this.buffer.length - this.at < n) throw new RangeError('SectionReader.takeNow past what ensure provided');
    const out = this.buffer.subarray(this.at, this.at + n);
    this.at += n;
    return out;
  }

  async take(n: number): Promise<Buffer> {
    await this.ensure(n);
    return this.takeNow(n);
  }

  async u32(): Promise<number> {
    return (await this.take(4)).readUInt32LE(0);
  }
}
