/**
 * The public transcript: an append-only, hash-chained log of every link of every chain (one JSON
 * object a line). Each entry carries the hash of the one before, starting from a genesis hash
 * bound to the ceremony id, so no entry can be changed, dropped or reordered without breaking
 * every later hash. The whole file is rewritten through a temporary file and an atomic rename,
 * so a crash leaves the previous transcript intact. It is the commit point of the CLI ceremony:
 * a zkey is part of a chain only once its entry is here. Entries are written in format 2, with
 * every key's section hashes (transcript-format.ts).
 */
import { readFile } from 'node:fs/promises';
import { z } from 'zod';
import { writeFileAtomic } from '../fs/atomic-write.ts';
import { CoordinatorError } from '../errors.ts';
import type { SectionHashes } from '../zkey/zkey-hashes.ts';
import { chainEntryHash, chainGenesisHash } from './hash-chain.ts';
import {
  BEACON_ITERATIONS_EXP,
  BEACON_ANNOUNCEMENT,
  entryFormatProblem,
  TranscriptOrder,
  TRANSCRIPT_VERSION,
  ZKEY_SECTION_IDS,
} from './transcript-format.ts';

const hex = z.string().regex(/^[0-9a-f]+$/);
const VERIFIER_NAME = /^Verifier[A-Za-z0-9_]+$/;
const hash512 = z.string().regex(/^[0-9a-f]{128}$/);
const sectionHashes = z
  .record(z.string(), hash512)
  .refine(
    (hashes) =>
      Object.keys(hashes).length === ZKEY_SECTION_IDS.length &&
      ZKEY_SECTION_IDS.every((id) => Object.hasOwn(hashes, String(id))),
    { message: `must hash exactly the sections ${ZKEY_SECTION_IDS.join(', ')}` },
  );

const base = {
  seq: z.number().int().nonnegative(),
  time: z.string().datetime(),
  prevHash: hash512,
  hash: hash512,
  version: z.literal(TRANSCRIPT_VERSION).optional(),
};
/** What a format-2 entry naming a key adds. */
const keyHashes = { sectionHashes: sectionHashes.optional() };

const entrySchema = z.discriminatedUnion('type', [
  z
    .object({
      ...base,
      type: z.literal('init'),
      circuit: z.string(),
      index: z.literal(0),
      circuitHash: hash512,
      fileHash: hash512,
      ...keyHashes,
    })
    .strict(),
  z
    .object({
      ...base,
      type: z.literal('contribution'),
      circuit: z.string(),
      index: z.number().int().positive(),
      contributor: z.string(),
      contributionHash: hash512,
      fileHash: hash512,
      ...keyHashes,
    })
    .strict(),
  z
    .object({
      ...base,
      type: z.literal('beacon'),
      circuit: z.string(),
      index: z.number().int().positive(),
      contributionHash: hash512,
      fileHash: hash512,
      beacon: hex,
      iterationsExp: z.number().int().min(BEACON_ITERATIONS_EXP.min).max(BEACON_ITERATIONS_EXP.max),
      ...keyHashes,
    })
    .strict(),
  z
    .object({
      ...base,
      type: z.literal(BEACON_ANNOUNCEMENT),
      chainId: z.number().int().positive().max(Number.MAX_SAFE_INTEGER),
      blockNumber: z.number().int().nonnegative().max(Number.MAX_SAFE_INTEGER),
      iterationsExp: z.number().int().min(BEACON_ITERATIONS_EXP.min).max(BEACON_ITERATIONS_EXP.max),
    })
    .strict(),
  z
    .object({
      ...base,
      type: z.literal('finalised'),
      manifestHash: hash512,
      // How the verifiers compile and their sources (final/compiler.json, final/Verifier*.sol): absent
      // from ceremonies finalised before they were committed, which the checks that need them refuse.
      compilerRecordHash: hash512.optional(),
      verifierSourceHashes: z.record(z.string().regex(VERIFIER_NAME), hash512).optional(),
    })
    .strict(),
]);

export type TranscriptEntry = z.infer<typeof entrySchema>;
type DistributiveOmit<T, K extends PropertyKey> = T extends unknown ? Omit<T, K> : never;
type WithSections<T> = T extends { type: 'finalised' | typeof BEACON_ANNOUNCEMENT }
  ? T
  : T & { sectionHashes: SectionHashes };
/**
 * An entry as a caller proposes it: an entry naming a key must give its section hashes; the
 * transcript fills in the version, sequence, time and hashes.
 */
export type NewTranscriptEntry = WithSections<
  DistributiveOmit<TranscriptEntry, 'seq' | 'time' | 'prevHash' | 'hash' | 'version'>
> & {
  time?: string;
};

export function genesisHash(ceremonyId: string): string {
  return chainGenesisHash('transcript', ceremonyId);
}

export function entryHash(entry: Omit<TranscriptEntry, 'hash'> | TranscriptEntry): string {
  return chainEntryHash(entry);
}

function corrupt(path: string, line: number, why: string): CoordinatorError {
  return new CoordinatorError('transcript.corrupt', `transcript ${path}, line ${line}: ${why}`);
}

/**
 * Parses and checks a transcript's text: schema, sequence numbers, the hash chain, and the order
 * rules (TranscriptOrder: the `finalised` entry last, after every chain's beacon; nothing begun or
 * contributed after the beacon announcement).
 */
export function parseTranscript(text: string, ceremonyId: string, path = 'transcript'): TranscriptEntry[] {
  const entries: TranscriptEntry[] = [];
  const order = new TranscriptOrder();
  let prevHash = genesisHash(ceremonyId);
  const lines = text.split('\n');
  if (lines.at(-1) === '') lines.pop();
  lines.forEach((line, i) => {
    let raw: unknown;
    try {
      raw = JSON.parse(line);
    } catch {
      throw corrupt(path, i + 1, 'not valid JSON');
    }
    const parsed = entrySchema.safeParse(raw);
    if (!parsed.success)
      throw corrupt(
        path,
        i + 1,
        `unexpected entry: ${parsed.error.issues.map((x) => `${x.path.join('.')} ${x.message}`).join('; ')}`,
      );
    const entry = parsed.data;
    if (entry.seq !== i) throw corrupt(path, i + 1, `sequence number ${entry.seq}, expected ${i}`);
    const formatProblem = entryFormatProblem(entry, entries.at(-1));
    if (formatProblem) throw corrupt(path, i + 1, formatProblem);
    const orderProblem = order.next(entry);
    if (orderProblem) throw corrupt(path, i + 1, orderProblem);
    if (entry.prevHash !== prevHash)
      throw corrupt(path, i + 1, 'does not chain to the entry before it (prevHash differs)');
    if (entryHash(entry) !== entry.hash) throw corrupt(path, i + 1, 'its hash does not match its contents');
    prevHash = entry.hash;
    entries.push(entry);
  });
  return entries;
}

export class Transcript {
  private constructor(
    readonly path: string,
    readonly ceremonyId: string,
    private readonly list: TranscriptEntry[],
  ) {}

  /** Loads and verifies the transcript; a missing file is an empty transcript. */
  static async load(path: string, ceremonyId: string): Promise<Transcript> {
    let text = '';
    try {
      text = await readFile(path, 'utf8');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    }
    return new Transcript(path, ceremonyId, parseTranscript(text, ceremonyId, path));
  }

  get entries(): readonly TranscriptEntry[] {
    return this.list;
  }

  get lastHash(): string {
    return this.list.at(-1)?.hash ?? genesisHash(this.ceremonyId);
  }

  /**
   * Appends entries durably (temp file + rename); returns them as written, always in format 2
   * (TRANSCRIPT_VERSION, whatever the caller passed): nothing writes format 1, which proves less
   * (legacy-transcript.ts). An entry the order or format rules refuse (a key entry without its
   * section hashes) is refused here, before the file is touched: written, it would make every later
   * load of the transcript fail.
   */
  async append(proposed: NewTranscriptEntry[]): Promise<TranscriptEntry[]> {
    const order = new TranscriptOrder();
    for (const entry of this.list) order.next(entry);
    for (const entry of proposed) {
      const problem = order.next(entry);
      if (problem) throw new CoordinatorError('transcript.corrupt', `refusing to append ${problem}`);
    }
    const added: TranscriptEntry[] = [];
    let prevHash = this.lastHash;
    for (const item of proposed) {
      const unsigned = {
        ...item,
        version: TRANSCRIPT_VERSION,
        seq: this.list.length + added.length,
        time: item.time ?? new Date().toISOString(),
        prevHash,
      };
      const entry = { ...unsigned, hash: entryHash(unsigned as TranscriptEntry) } as TranscriptEntry;
      const formatProblem = entryFormatProblem(entry, added.at(-1) ?? this.list.at(-1));
      if (formatProblem) throw new CoordinatorError('transcript.corrupt', `refusing to append ${formatProblem}`);
      added.push(entry);
      prevHash = entry.hash;
    }
    const all = [...this.list, ...added];
    await writeFileAtomic(this.path, all.map((entry) => JSON.stringify(entry)).join('\n') + '\n');
    this.list.push(...added);
    return added;
  }
}
