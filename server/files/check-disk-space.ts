/**
 * The free-space guard of uploads: whether the disk holding the data folder still has room for the
 * largest possible upload plus a configured margin. Uploads are refused (upload.disk_full) before
 * a byte is stored when it has not, so a full disk never cuts off a contribution half-written, nor
 * the transcript and SQLite that live on the same disk.
 */
import { statfs } from 'node:fs/promises';

export interface DiskSpace {
  /** Whether new uploads are taken: free ≥ required. */
  accepting: boolean;
  /** Bytes available to the coordinator's user on the data folder's disk. */
  freeBytes: number;
  /** The largest possible upload plus the margin (UPLOAD_DISK_MARGIN_BYTES). */
  requiredBytes: number;
}

/** Bytes available to the coordinator's user on the disk holding `directory`. */
async function freeDiskBytes(directory: string): Promise<number> {
  const stats = await statfs(directory);
  return stats.bavail * stats.bsize;
}

export async function checkDiskSpace(
  directory: string,
  requiredBytes: number,
  freeBytesOf: (directory: string) => Promise<number> = freeDiskBytes,
): Promise<DiskSpace> {
  const freeBytes = await freeBytesOf(directory);
  return { accepting: freeBytes >= requiredBytes, freeBytes, requiredBytes };
}
