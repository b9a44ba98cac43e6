/**
 * The skeleton (zkey-delta-v1) of each chain's head, what GET /api/circuits/:name/contribution-inputs
 * serves: written once per head into the coordinator's private state folder and served from disk
 * (ranges included), so a hundred downloads of the same head cost one pass over its L and H.
 * Concurrent requests for the same head share one write; a circuit keeps only its current head's
 * skeleton (older ones, and halves a crash left, are deleted when the next is written).
 */
import { mkdir, readdir, rm, stat } from 'node:fs/promises';
import path from 'node:path';
import { writeSkeleton } from '../../core/delta/skeleton-zkey.ts';

export class HeadSkeletons {
  private readonly writing = new Map<string, Promise<string>>();

  /**
   * @param directory the folder the skeletons live in (the coordinator's, never published)
   * @param zkeyPath where a chain's key of a given index is
   */
  constructor(
    private readonly directory: string,
    private readonly zkeyPath: (circuit: string, index: number) => string,
  ) {}

  /** The path of the skeleton of `circuit`'s key `index`, written first if it is not there yet. */
  skeletonOf(circuit: string, index: number): Promise<string> {
    const file = path.join(this.directory, `${circuit}_${index}.inputs`);
    let pending = this.writing.get(file);
    if (!pending) {
      pending = this.ensure(circuit, file, index).finally(() => this.writing.delete(file));
      this.writing.set(file, pending);
    }
    return pending;
  }

  private async ensure(circuit: string, file: string, index: number): Promise<string> {
    const exists = await stat(file).then(
      () => true,
      (error: NodeJS.ErrnoException) => {
        if (error.code === 'ENOENT') return false;
        throw error;
      },
    );
    if (exists) return file;
    await mkdir(this.directory, { recursive: true, mode: 0o700 });
    await writeSkeleton(this.zkeyPath(circuit, index), file);
    // Only now: a download of the previous head still being served keeps its open file either way.
    for (const name of await readdir(this.directory)) {
      // Temporary files (a write under way, or half of one a crash left) start with a dot.
      const bare = name.replace(/^\./, '');
      if (bare.startsWith(`${circuit}_`) && path.join(this.directory, name) !== file && !this.isBeingWritten(bare))
        await rm(path.join(this.directory, name), { force: true });
    }
    return file;
  }

  private isBeingWritten(bareName: string): boolean {
    return [...this.writing.keys()].some((file) => bareName.startsWith(path.basename(file)));
  }
}
