/**
 * A file's identity as the filesystem keeps it: device, inode, size and modification time (ns).
 * Any write through any descriptor changes the modification time, and a rename keeps all four,
 * so an equal identity later says the file was neither written nor replaced since, without
 * reading it again (a 2^18 key takes a quarter of a second to hash).
 */
import { stat } from 'node:fs/promises';

export interface FileIdentity {
  dev: bigint;
  ino: bigint;
  size: bigint;
  mtimeNs: bigint;
}

export async function fileIdentity(filePath: string): Promise<FileIdentity> {
  const s = await stat(filePath, { bigint: true });
  return { dev: s.dev, ino: s.ino, size: s.size, mtimeNs: s.mtimeNs };
}

export function sameFileIdentity(a: FileIdentity, b: FileIdentity): boolean {
  return a.dev === b.dev && a.ino === b.ino && a.size === b.size && a.mtimeNs === b.mtimeNs;
}

/** A FileIdentity with each field as a decimal string, to cross JSON (a verification request). */
export type SerialisedFileIdentity = Record<keyof FileIdentity, string>;

export function serialiseFileIdentity(identity: FileIdentity): SerialisedFileIdentity {
  return {
    dev: String(identity.dev),
    ino: String(identity.ino),
    size: String(identity.size),
    mtimeNs: String(identity.mtimeNs),
  };
}

export function parseFileIdentity(fields: SerialisedFileIdentity): FileIdentity {
  return {
    dev: BigInt(fields.dev),
    ino: BigInt(fields.ino),
    size: BigInt(fields.size),
    mtimeNs: BigInt(fields.mtimeNs),
  };
}
