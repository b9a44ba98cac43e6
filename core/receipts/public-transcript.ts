/**
 * The public transcript as the receipt check reads it (from `GET /api/transcript` or a published
 * `transcript/transcript.jsonl`), its hash chain recomputed from the genesis hash of the ceremony
 * id exactly as core/transcript/transcript.ts writes it: each entry's hash is BLAKE2b-512 of its
 * canonical JSON without the hash, and each entry names the hash of the one before. So the check
 * sees the same transcript every auditor sees, and an entry cannot have been changed, dropped or
 * reordered without the chain breaking. Both formats are read (core/transcript/transcript-format.ts):
 * a format-2 entry naming a key carries its section hashes, which the checker holds the bytes it
 * reads against. Isomorphic (no `node:` imports): the page runs it too.
 */
import { blake2b } from '@noble/hashes/blake2b';
import { canonicalJson } from '../transcript/canonical-json.ts';
import {
  BEACON_ITERATIONS_EXP,
  BEACON_ANNOUNCEMENT,
  entryFormatProblem,
  TranscriptOrder,
  ZKEY_SECTION_IDS,
} from '../transcript/transcript-format.ts';
import { CoordinatorError } from '../errors.ts';

export interface PublicTranscriptEntry {
  seq: number;
  time: string;
  type: 'init' | 'contribution' | 'beacon' | typeof BEACON_ANNOUNCEMENT | 'finalised';
  circuit?: string;
  index?: number;
  contributor?: string;
  circuitHash?: string;
  contributionHash?: string;
  fileHash?: string;
  beacon?: string;
  iterationsExp?: number;
  manifestHash?: string;
  /** A `finalised` entry's BLAKE2b-512 of final/compiler.json and of each final/Verifier*.sol, by verifier. */
  compilerRecordHash?: string;
  verifierSourceHashes?: Record<string, string>;
  /** A beacon announcement's EVM chain (EIP-155 id) and block, whose hash is the beacon. */
  chainId?: number;
  blockNumber?: number;
  /** 2 for a format-2 entry; absent for format 1. */
  version?: number;
  /** A format-2 key entry's hash of each of its key's sections, by section id. */
  sectionHashes?: Record<string, string>;
  prevHash: string;
  hash: string;
}

export interface PublicChain {
  circuit: string;
  init?: PublicTranscriptEntry;
  /** Contributions in chain order: `contributions[i]` has index i + 1. */
  contributions: PublicTranscriptEntry[];
  beacon?: PublicTranscriptEntry;
}

export interface PublicTranscript {
  ceremony: string;
  entries: PublicTranscriptEntry[];
  chains: Map<string, PublicChain>;
  finalised: boolean;
  /** The entry committing to the beacon before it was known, if the coordinator made one. */
  beaconAnnouncement?: PublicTranscriptEntry;
  /** The hash of the last entry: the ceremony's one identifier (it commits to every entry before it). */
  identifier?: { hash: string; seq: number; type: PublicTranscriptEntry['type'] };
}

const HASH512 = /^[0-9a-f]{128}$/;
const HEX = /^[0-9a-f]+$/;
/** The fields each entry type must carry, and what each must look like. */
const REQUIRED: Record<PublicTranscriptEntry['type'], string[]> = {
  init: ['circuit', 'index', 'circuitHash', 'fileHash'],
  contribution: ['circuit', 'index', 'contributor', 'contributionHash', 'fileHash'],
  beacon: ['circuit', 'index', 'contributionHash', 'fileHash', 'beacon', 'iterationsExp'],
  [BEACON_ANNOUNCEMENT]: ['chainId', 'blockNumber', 'iterationsExp'],
  finalised: ['manifestHash'],
};
const safeInteger = (v: unknown, min: number): boolean => typeof v === 'number' && Number.isSafeInteger(v) && v >= min;
const FIELD_SHAPE: Record<string, (value: unknown) => boolean> = {
  circuit: (v) => typeof v === 'string' && v.length > 0,
  contributor: (v) => typeof v === 'string',
  index: (v) => safeInteger(v, 0),
  chainId: (v) => safeInteger(v, 1),
  blockNumber: (v) => safeInteger(v, 0),
  iterationsExp: (v) =>
    typeof v === 'number' && Number.isInteger(v) && v >= BEACON_ITERATIONS_EXP.min && v <= BEACON_ITERATIONS_EXP.max,
  beacon: (v) => typeof v === 'string' && HEX.test(v),
  circuitHash: (v) => typeof v === 'string' && HASH512.test(v),
  contributionHash: (v) => typeof v === 'string' && HASH512.test(v),
  fileHash: (v) => typeof v === 'string' && HASH512.test(v),
  manifestHash: (v) => typeof v === 'string' && HASH512.test(v),
  compilerRecordHash: (v) => typeof v === 'string' && HASH512.test(v),
  verifierSourceHashes: (v) =>
    typeof v === 'object' &&
    v !== null &&
    !Array.isArray(v) &&
    Object.entries(v).every(
      ([name, hash]) => /^Verifier[A-Za-z0-9_]+$/.test(name) && typeof hash === 'string' && HASH512.test(hash),
    ),
};
/** Fields an entry may carry, checked when present. */
const OPTIONAL: Partial<Record<PublicTranscriptEntry['type'], string[]>> = {
  finalised: ['compilerRecordHash', 'verifierSourceHashes'],
};

/** A format-2 entry's section hashes: exactly the ten sections of a zkey, each a BLAKE2b-512. */
function wellFormedSectionHashes(value: unknown): boolean {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const hashes = value as Record<string, unknown>;
  return (
    Object.keys(hashes).length === ZKEY_SECTION_IDS.length &&
    ZKEY_SECTION_IDS.every((id) => typeof hashes[String(id)] === 'string' && HASH512.test(hashes[String(id)] as string))
  );
}

const toHex = (bytes: Uint8Array): string => Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('');
const hashText = (text: string): string => toHex(blake2b(new TextEncoder().encode(text), { dkLen: 64 }));

/** The hash the first entry names as its predecessor: bound to the ceremony id. */
export function transcriptGenesisHash(ceremonyId: string): string {
  return hashText(`phase2-ceremony transcript genesis:${ceremonyId}`);
}

/**
 * Checks `rawEntries` (the parsed entries) as the transcript of ceremony `ceremonyId`: shapes,
 * sequence numbers, the hash chain, each circuit's indexes in order, and the order rules
 * (TranscriptOrder: the `finalised` entry last, after every chain's beacon; nothing begun or
 * contributed after the beacon announcement). `source` names where the transcript came from in messages.
 * Throws `transcript.corrupt`.
 */
export function checkPublicTranscript(ceremonyId: string, rawEntries: unknown, source: string): PublicTranscript {
  const corrupt = (why: string): CoordinatorError =>
    new CoordinatorError('transcript.corrupt', `the transcript ${source} serves ${why}`);
  if (!Array.isArray(rawEntries)) throw corrupt('is not a list of entries');
  let prevHash = transcriptGenesisHash(ceremonyId);
  const entries: PublicTranscriptEntry[] = [];
  const chains = new Map<string, PublicChain>();
  let finalised = false;
  let beaconAnnouncement: PublicTranscriptEntry | undefined;
  const order = new TranscriptOrder();
  rawEntries.forEach((raw: unknown, seq) => {
    const at = `entry ${seq}`;
    if (typeof raw !== 'object' || raw === null || Array.isArray(raw))
      throw corrupt(`has an ${at} that is not an object`);
    const entry = raw as Record<string, unknown>;
    const type = entry.type as PublicTranscriptEntry['type'];
    if (!Object.hasOwn(REQUIRED, type)) throw corrupt(`has an ${at} of unknown type`);
    for (const field of REQUIRED[type]) {
      if (!FIELD_SHAPE[field]!(entry[field]))
        throw corrupt(`has an ${at} (${type}) whose ${field} is missing or malformed`);
    }
    for (const field of OPTIONAL[type] ?? []) {
      if (entry[field] !== undefined && !FIELD_SHAPE[field]!(entry[field]))
        throw corrupt(`has an ${at} (${type}) whose ${field} is malformed`);
    }
    if (entry.seq !== seq) throw corrupt(`has an ${at} numbered ${String(entry.seq)}`);
    if (entry.version !== undefined && entry.version !== 2) throw corrupt(`has an ${at} of unknown format`);
    const formatProblem = entryFormatProblem(entry as { type: string }, entries.at(-1));
    if (formatProblem) throw corrupt(`has an ${at} that breaks its format: ${formatProblem}`);
    const orderProblem = order.next(entry as { type: string });
    if (orderProblem) throw corrupt(`has an ${at} out of order: ${orderProblem}`);
    if (entry.sectionHashes !== undefined && !wellFormedSectionHashes(entry.sectionHashes))
      throw corrupt(`has an ${at} (${type}) whose section hashes are malformed`);
    if (typeof entry.time !== 'string') throw corrupt(`has an ${at} without a time`);
    if (entry.prevHash !== prevHash) {
      throw corrupt(
        seq === 0
          ? `does not start from the genesis of ceremony "${ceremonyId}"`
          : `breaks its hash chain at ${at} (it does not name the hash of the entry before it)`,
      );
    }
    const { hash, ...rest } = entry;
    if (hash !== hashText(canonicalJson(rest))) throw corrupt(`has an ${at} whose hash does not match its contents`);
    prevHash = hash;
    const checked = entry as unknown as PublicTranscriptEntry;
    entries.push(checked);
    if (type === 'finalised') {
      finalised = true;
      return;
    }
    if (type === BEACON_ANNOUNCEMENT) {
      beaconAnnouncement = checked;
      return;
    }
    const circuit = checked.circuit!;
    const chain = chains.get(circuit) ?? { circuit, contributions: [] };
    chains.set(circuit, chain);
    const expectedIndex = chain.init ? chain.contributions.length + 1 : 0;
    if (chain.beacon) throw corrupt(`extends ${circuit} after its final beacon (${at})`);
    if (checked.index !== expectedIndex)
      throw corrupt(`gives ${circuit} index ${checked.index} at ${at}, expected ${expectedIndex}`);
    if (type === 'init') chain.init = checked;
    else if (type === 'contribution') chain.contributions.push(checked);
    else chain.beacon = checked;
  });
  const last = entries.at(-1);
  const identifier = last ? { hash: last.hash, seq: last.seq, type: last.type } : undefined;
  return {
    ceremony: ceremonyId,
    entries,
    chains,
    finalised,
    ...(beaconAnnouncement ? { beaconAnnouncement } : {}),
    ...(identifier ? { identifier } : {}),
  };
}
