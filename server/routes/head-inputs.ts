/**
 * Each head's contribution inputs (its skeleton, head-skeletons.ts) and the hashes of the files the
 * coordinator serves (immutable-download.ts), shared by the download routes and the service: when a
 * contribution is accepted its skeleton is written and hashed at once (`prepare`), so the next
 * turn's first request for the inputs is answered from disk instead of waiting for a pass over the
 * new head's L and H (a second or more at 2^18) before its first byte.
 */
import path from 'node:path';
import type { CeremonyConfig } from '../../core/config/ceremony-config.ts';
import { ceremonyPaths } from '../../core/data-folder/ceremony-paths.ts';
import { HeadSkeletons } from '../files/head-skeletons.ts';
import { FileHashes } from './immutable-download.ts';

export class HeadInputs {
  // In the coordinator's private state folder: never published (they are derived from the chain).
  readonly skeletons: HeadSkeletons;
  readonly hashes = new FileHashes();
  private readonly preparing = new Set<Promise<void>>();

  constructor(config: Pick<CeremonyConfig, 'dataDir'>) {
    this.skeletons = new HeadSkeletons(
      path.join(config.dataDir, 'state', 'skeletons'),
      ceremonyPaths(config.dataDir).zkeyPath,
    );
  }

  /** Writes and hashes the inputs of `circuit`'s head `index` ahead of their first download; never throws. */
  prepare(circuit: string, index: number, warn: (message: string, fields?: Record<string, unknown>) => void): void {
    const pending: Promise<void> = this.skeletons
      .skeletonOf(circuit, index)
      .then((file) => this.hashes.of(file))
      .then(
        () => {},
        // The first download writes them anyway.
        (error: unknown) => warn('could not prepare the head inputs ahead', { circuit, index, error: String(error) }),
      )
      .finally(() => this.preparing.delete(pending));
    this.preparing.add(pending);
  }

  /** Resolves once nothing is being prepared (the coordinator stops: its folder may go next). */
  async idle(): Promise<void> {
    await Promise.all([...this.preparing]);
  }
}
