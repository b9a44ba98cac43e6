/**
 * The head a delta test works on: a new initialised ceremony folder, a scratch folder of the test's
 * own, and the first circuit's contribution 0 (the head) with its skeleton, the inputs a
 * contributor downloads, written to `head.skeleton` in the scratch folder. The test removes both
 * folders (tests/helpers/clean-up.ts).
 */
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { loadCeremonyConfig } from '../../core/config/ceremony-config.ts';
import { ceremonyPaths } from '../../core/data-folder/ceremony-paths.ts';
import { writeSkeleton } from '../../core/delta/skeleton-zkey.ts';
import { newCeremonyDir } from '../fixtures/ceremony-fixture.ts';

export interface HeadSkeleton {
  dataDir: string;
  scratch: string;
  /** The head key (contribution 0 of the first circuit). */
  head: string;
  /** Its skeleton, in `scratch`. */
  skeleton: string;
}

export async function headWithSkeleton(scratchPrefix: string): Promise<HeadSkeleton> {
  const dataDir = await newCeremonyDir({ init: true });
  const scratch = await mkdtemp(path.join(tmpdir(), scratchPrefix));
  const config = await loadCeremonyConfig(dataDir);
  const head = ceremonyPaths(dataDir).zkeyPath(config.circuits[0]!.name, 0);
  const skeleton = path.join(scratch, 'head.skeleton');
  await writeSkeleton(head, skeleton);
  return { dataDir, scratch, head, skeleton };
}
