/**
 * Positioned reads that either fill what was asked or fail: the one way core reads a known range
 * of a binary file (zkey, ptau). A read can legitimately return fewer bytes than asked, so it is
 * repeated until the range is filled; a file that ends first is a `ShortReadError`, which each
 * caller turns into its own refusal (it knows the file's role and the code to use).
 */
import type { FileHandle } from 'node:fs/promises';

export class ShortReadError extends RangeError {
  constructor() {
    super('unexpected end of file');
    this.name = 'ShortReadError';
  }
}

/** Fills the whole of `target` with the bytes of the file from `position`. */
export async function readExactlyInto(handle: FileHandle, target: Uint8Array, position: number): Promise<void> {
  for (let done = 0; done < target.byteLength;) {
    const { bytesRead } = await handle.read(target, done, target.byteLength - done, position + done);
    if (bytesRead === 0) throw new ShortReadError();
    done += bytesRead;
  }
}

/** The `length` bytes of the file from `position`, in a new Buffer. */
export async function readExactly(handle: FileHandle, position: number, length: number): Promise<Buffer> {
  const buffer = Buffer.alloc(length);
  await readExactlyInto(handle, buffer, position);
  return buffer;
}
