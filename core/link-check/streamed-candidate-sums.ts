/**
 * The link check's work on a candidate's L and H, done chunk by chunk while its upload arrives
 * (server/files/delta-intake.ts feeds it the points as the splice passes them): every point
 * checked on the curve and canonical, its partial sums under the circuit key's scalars
 * (link-challenge.ts; the scalars of a point depend on its section and index only, so chunks get
 * the ones a whole read would), and the digests of where it holds the point at infinity.
 *
 * verify-link-from-head.ts refuses a candidate whose points at infinity are not exactly the head's
 * before any sum with the secret scalars starts (docs/link-check.md says why). The same holds
 * here chunk by chunk: the head's positions are read from the head itself (a verified file), and a
 * chunk is only summed once its own positions are found equal to the head's in its range.
 *
 * A point off the curve or points at infinity elsewhere than the head's stop the sums with the
 * refusal the verifier would give (`refusal`: contribution.point_not_on_curve,
 * contribution.identity_pattern_changed), so the coordinator refuses the delta before handing it
 * in rather than have the verifier read and sum L and H a second time to find the same point. Both
 * checks depend on the points alone, never on the scalars. Anything else (the kernel unable to
 * run) stops the sums and yields nothing: the verifier then reads and checks L and H itself.
 * These sums never accept anything: the verifier decides every candidate handed in.
 */
import { open, stat } from 'node:fs/promises';
import { CoordinatorError } from '../errors.ts';
import { readExactlyInto } from '../binfile/read-exactly.ts';
import { readSectionTable } from '../binfile/section-table.ts';
import { g1CheckedPartialSums } from '../kernel/multi-exp.ts';
import { joinPoints } from '../kernel/split-points.ts';
import { challengeScalars } from './link-challenge.ts';
import { IdentityPatternDigest, identityIndices } from './identity-pattern.ts';
import type { CandidateSums } from './link-combination-cache.ts';
import { LINK_SCALAR_BYTES } from './verify-link-from-head.ts';

const L_SECTION = 8;
const H_SECTION = 9;
const G1_BYTES = 64;
const READ_POINTS = 1 << 16;
/** Chunks waiting for their turn before the feeder is asked to wait (the splice's hold 2 MiB each). */
const MAX_QUEUED = 3;

/**
 * How chunks are gathered into sums. A multi-exponentiation costs less a point the more points it
 * takes at once (its buckets are summed once per call; bench/link-sum-batches.ts measures it). So
 * chunks are gathered into batches of `batchPoints` (8 MiB by default), except in the last
 * `tailPoints` of a section, whose chunks are summed as they come: in a turn, where the upload
 * follows the page's compute, what is left to sum after the last byte (the coordinator's share of
 * the turn) stays one chunk, not a batch. A batch is held until it is summed: with its copies for
 * the threads and the chunks queued behind it, about 30 MiB an upload at most.
 */
export interface SumBatching {
  batchPoints: number;
  tailPoints: number;
}
const DEFAULT_BATCHING: SumBatching = { batchPoints: 1 << 17, tailPoints: 1 << 16 };

interface SectionState {
  count: number;
  /** The head's points at infinity, in ascending order. */
  headIdentities: number[];
  digest: IdentityPatternDigest;
  parts: Uint8Array[];
  /** Points taken in: checked against the head's pattern, summed or waiting in `batch`. */
  taken: number;
  summed: number;
  /** Chunks taken and not yet summed, in order, from point `summed` on. */
  batch: Uint8Array[];
}

/** The head's points at infinity in L and H, with each section's point count. */
type HeadPattern = Map<number, { count: number; identities: number[] }>;

/**
 * Heads whose patterns were read, by path: a committed key is never written again, and every
 * upload on a head (each replacing the last) would otherwise read its L and H anew. A few heads
 * (one per circuit) are kept; the indices are few, so the entries are small.
 */
const headPatterns = new Map<string, Promise<HeadPattern>>();
const HEAD_PATTERNS_KEPT = 16;

async function headPattern(headPath: string): Promise<HeadPattern> {
  // By path and file identity: a folder initialised anew at the same path is another head.
  const { ino, size, mtimeMs } = await stat(headPath);
  const key = `${headPath}\0${ino}\0${size}\0${mtimeMs}`;
  let pattern = headPatterns.get(key);
  if (!pattern) {
    pattern = readHeadPattern(headPath);
    pattern.catch(() => headPatterns.delete(key));
    headPatterns.set(key, pattern);
    if (headPatterns.size > HEAD_PATTERNS_KEPT) headPatterns.delete(headPatterns.keys().next().value!);
  }
  return pattern;
}

/** The indices of the points at infinity of the head's L and H, read from its file. */
async function readHeadPattern(headPath: string): Promise<HeadPattern> {
  const file = await open(headPath, 'r');
  try {
    const table = await readSectionTable(file, (await file.stat()).size, 'zkey');
    const pattern: HeadPattern = new Map();
    const bytes = new Uint8Array(READ_POINTS * G1_BYTES);
    for (const id of [L_SECTION, H_SECTION]) {
      const at = table.sections.get(id);
      if (!at) throw new Error(`the head has no section ${id}`);
      const count = at.size / G1_BYTES;
      const identities: number[] = [];
      for (let first = 0; first < count; first += READ_POINTS) {
        const chunk = bytes.subarray(0, Math.min(READ_POINTS, count - first) * G1_BYTES);
        await readExactlyInto(file, chunk, at.offset + first * G1_BYTES);
        identities.push(...identityIndices(chunk, first));
      }
      pattern.set(id, { count, identities });
    }
    return pattern;
  } finally {
    await file.close();
  }
}

/** The entries of sorted `values` in [from, to). */
function inRange(values: number[], from: number, to: number): number[] {
  let lo = 0;
  let hi = values.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (values[mid]! < from) lo = mid + 1;
    else hi = mid;
  }
  const out: number[] = [];
  for (let i = lo; i < values.length && values[i]! < to; i++) out.push(values[i]!);
  return out;
}

function sameList(a: number[], b: number[]): boolean {
  return a.length === b.length && a.every((value, i) => value === b[i]);
}

export class StreamedCandidateSums {
  private tail: Promise<void> = Promise.resolve();
  private queued = 0;
  private wakeFeeder: (() => void) | undefined;
  /** Why the sums stopped, once they have (the coordinator logs it). */
  stopped: string | undefined;
  /** The refusal the candidate earned, when the sums stopped on a point the verifier would refuse. */
  refusal: CoordinatorError | undefined;
  /** Told of `refusal` once found: the coordinator keeps it with the upload, past a restart. */
  onRefusal: ((refusal: CoordinatorError) => void) | undefined;
  /** Multi-exponentiations run so far (one a batch). */
  sumsRun = 0;

  private constructor(
    private readonly key: Uint8Array,
    private readonly sections: Map<number, SectionState>,
    private readonly batching: SumBatching,
  ) {}

  /** Ready to take the points of a candidate on the head at `headPath`, under circuit key `key`. */
  static async start(
    key: Uint8Array,
    headPath: string,
    batching: SumBatching = DEFAULT_BATCHING,
  ): Promise<StreamedCandidateSums> {
    const sections = new Map<number, SectionState>();
    for (const [id, { count, identities }] of await headPattern(headPath)) {
      sections.set(id, {
        count,
        headIdentities: identities,
        digest: new IdentityPatternDigest(id, count),
        parts: [],
        taken: 0,
        summed: 0,
        batch: [],
      });
    }
    return new StreamedCandidateSums(key, sections, batching);
  }

  /** Takes the next chunk of L or H (in order); the sums run behind. */
  add(section: number, first: number, points: Uint8Array): void {
    this.queued++;
    this.tail = this.tail.then(async () => {
      try {
        if (this.stopped === undefined) await this.take(section, first, points);
      } catch (error) {
        this.stop(`the kernel could not sum (${error instanceof Error ? error.message : String(error)})`);
      } finally {
        this.queued--;
        this.wakeFeeder?.();
      }
    });
  }

  /** Resolves once few enough chunks wait, so that a fast link cannot pile chunks up in memory. */
  async room(): Promise<void> {
    while (this.queued > MAX_QUEUED) await new Promise<void>((wake) => (this.wakeFeeder = wake));
  }

  /** The sums once every chunk is in, or undefined when they stopped or did not cover L and H. */
  async result(): Promise<CandidateSums | undefined> {
    await this.tail;
    if (this.stopped !== undefined) return undefined;
    const [l, h] = [this.sections.get(L_SECTION)!, this.sections.get(H_SECTION)!];
    if (l.summed !== l.count || h.summed !== h.count) {
      this.stop('L and H were not summed to their ends');
      return undefined;
    }
    return { l: l.parts, h: h.parts, lIdentities: l.digest.digest(), hIdentities: h.digest.digest() };
  }

  /** Drops what is queued and summed (the candidate was refused, replaced or given up). */
  cancel(): void {
    this.stop('cancelled');
  }

  private stop(why: string): void {
    this.stopped ??= why;
    for (const state of this.sections.values()) {
      state.parts = [];
      state.batch = [];
    }
  }

  private refuse(refusal: CoordinatorError): void {
    this.refusal = refusal;
    this.onRefusal?.(refusal);
  }

  /** Checks a chunk's points at infinity against the head's, then batches it, summing when a batch is due. */
  private async take(section: number, first: number, points: Uint8Array): Promise<void> {
    const state = this.sections.get(section);
    const n = points.length / G1_BYTES;
    if (!state || first !== state.taken || first + n > state.count) return this.stop('chunks out of order');
    const found = identityIndices(points, first);
    if (!sameList(found, inRange(state.headIdentities, first, first + n))) {
      this.refuse(
        new CoordinatorError(
          'contribution.identity_pattern_changed',
          `the ${sectionName(section)} section holds the point at infinity at other places than the chain head ` +
            'does; a contribution scales every point and keeps them where they are',
        ),
      );
      return this.stop('points at infinity elsewhere than in the head');
    }
    state.digest.add(found);
    state.batch.push(points);
    state.taken += n;
    const left = state.count - state.taken;
    if (state.taken - state.summed >= this.batching.batchPoints || left < this.batching.tailPoints || left === 0) {
      await this.sumBatch(section, state);
    }
  }

  /** Sums the section's batch: its points from `summed` to `taken`, checked on the curve as they are summed. */
  private async sumBatch(section: number, state: SectionState): Promise<void> {
    const first = state.summed;
    const n = state.taken - first;
    const points = state.batch.length === 1 ? state.batch[0]! : joinPoints(state.batch, n * G1_BYTES);
    state.batch = [];
    const scalars = challengeScalars(this.key, section, first, n, LINK_SCALAR_BYTES);
    const result = await g1CheckedPartialSums(points, scalars, LINK_SCALAR_BYTES);
    this.sumsRun++;
    if ('invalidPoint' in result) {
      this.refuse(
        new CoordinatorError(
          'contribution.point_not_on_curve',
          `point ${first + result.invalidPoint} of the ${sectionName(section)} section is not a point of the curve`,
        ),
      );
      return this.stop('a point off the curve');
    }
    // Cancelled while this sum ran: a bad point above still earns its refusal, but these parts
    // belong to no result, and the section's were cleared.
    if (this.stopped !== undefined) return;
    state.parts.push(...result.parts);
    state.summed += n;
  }
}

function sectionName(section: number): 'L' | 'H' {
  return section === L_SECTION ? 'L' : 'H';
}
