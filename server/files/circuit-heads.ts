/**
 * What the uploads know of each circuit's head: the current one, read from the ceremony on disk
 * (for what comes before an upload has its candidate row: the creation rules, sizes), and the one an
 * upload was created on, pinned on its candidate row; with the state folder's challenge key the
 * intake sums under.
 */
import { stat } from 'node:fs/promises';
import { ceremonyPaths } from '../../core/data-folder/ceremony-paths.ts';
import { skeletonSize } from '../../core/delta/skeleton-zkey.ts';
import { circuitChallengeKey, linkChallengeSeed, stateDirFor } from '../../core/link-check/link-challenge.ts';
import { CeremonyStateReader, headIndexOf } from '../ceremony-state-reader.ts';
import type { CandidateStore } from '../contributions/candidate-store.ts';

export class CircuitHeads {
  /** The coordinator's state folder, where the challenge's secret and the verifier's caches live. */
  readonly stateDir: string;
  private readonly ceremony: CeremonyStateReader;

  constructor(
    private readonly dataDir: string,
    private readonly candidates: CandidateStore,
  ) {
    this.stateDir = stateDirFor(dataDir);
    this.ceremony = new CeremonyStateReader(dataDir);
  }

  /** The circuit's head now. */
  async current(circuit: string): Promise<number> {
    return headIndexOf(await this.ceremony.read(), circuit);
  }

  /** The head the upload at `file` was created on (its candidate row's); an upload older than the table: now's. */
  async of(file: string, circuit: string): Promise<number> {
    return this.candidates.get(file)?.headIndex ?? (await this.current(circuit));
  }

  path(circuit: string, headIndex: number): string {
    return ceremonyPaths(this.dataDir).zkeyPath(circuit, headIndex);
  }

  async size(circuit: string): Promise<number> {
    return (await stat(this.path(circuit, await this.current(circuit)))).size;
  }

  async sizes(circuit: string): Promise<{ index: number; keyBytes: number; skeletonBytes: number }> {
    const index = await this.current(circuit);
    const headPath = this.path(circuit, index);
    const [keyBytes, skeletonBytes] = await Promise.all([stat(headPath).then((s) => s.size), skeletonSize(headPath)]);
    return { index, keyBytes, skeletonBytes };
  }

  /** The circuit's secret link-challenge key, under which the intake sums and the verifier checks. */
  async challengeKey(circuit: string): Promise<Uint8Array> {
    return circuitChallengeKey(await linkChallengeSeed(this.stateDir), circuit);
  }
}
