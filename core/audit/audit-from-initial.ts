/**
 * The audit of a chain from contribution 0 (`ceremony audit`'s default): the chain's last key (the
 * final key once finalised, else its head) against contribution 0 and the records of its own
 * history (check-key-against-initial.ts), then every key between as the file its transcript entry
 * commits to, with contribution 0's circuit and fixed sections, the last key's records as its
 * history and δ2 its δ1 in G2 (check-intermediate-key.ts). Two MSMs over L‖H a chain, whatever its
 * length (link by link: one a key); what grows with the contributions is reading each key between
 * (its hashes) and a few pairings a record. What the verdict proves, and what it leaves (the L and
 * H of the keys between, no premise of the last key's): docs/audit.md.
 */
import { readZkeyInfo, type ContributionRecord } from '../zkey/zkey-file.ts';
import { checkKeyAgainstInitial } from './check-key-against-initial.ts';
import { checkIntermediateKey } from './check-intermediate-key.ts';
import path from 'node:path';
import type { CircuitChain } from '../ceremony/open-ceremony.ts';
import type { SectionHashes } from '../zkey/zkey-hashes.ts';
import {
  counted,
  expectKeyHashes,
  expectSectionHashes,
  readFailure,
  type ChainAudit,
  type CheckedKey,
} from './chain-audit-context.ts';
import { readKeyLayout, SectionHasher, type KeyLayout } from './key-section-hashes.ts';
import type { ZkeyInfo } from '../zkey/zkey-file.ts';

/** The chain's last key: where it is, what names it, its transcript entry. */
function lastKeyOf({ chain, paths, name }: ChainAudit) {
  const beacon = chain.beacon;
  if (beacon) return { path: paths.finalZkeyPath(name), keyName: 'the final key', entry: beacon };
  const entry = chain.contributions.at(-1)!;
  return { path: paths.zkeyPath(name, entry.index), keyName: `contribution ${entry.index}`, entry };
}

/** The last key against contribution 0; marks every contribution its history holds as verified. */
async function auditLastKey(
  audit: ChainAudit,
  zero: CheckedKey,
  init: ZkeyInfo,
): Promise<{ records: ContributionRecord[]; keyName: string }> {
  const { name, chain, audited, progress, timer } = audit;
  const last = lastKeyOf(audit);
  const records = chain.contributions.length + (chain.beacon ? 1 : 0);
  progress({
    type: 'step',
    circuit: name,
    step: `checking ${last.keyName} against contribution 0 and its ${counted(records, 'record')}`,
  });
  const hashes = await timer.time('key hashes (file and sections)', () =>
    expectKeyHashes(last.path, last.entry, last.keyName),
  );
  const key = await readZkeyInfo(last.path, last.keyName);
  const checked = await timer.time(`${last.keyName} against contribution 0 (records, L and H sums, pairings)`, () =>
    checkKeyAgainstInitial({
      init,
      key,
      ...(zero.hashes && hashes ? { hashes: { init: zero.hashes, key: hashes } } : {}),
      history: {
        contributionHashes: [
          ...chain.contributions.map((entry) => entry.contributionHash),
          ...(chain.beacon ? [chain.beacon.contributionHash] : []),
        ],
        ...(chain.beacon
          ? { beacon: { beaconHex: chain.beacon.beacon, iterationsExp: chain.beacon.iterationsExp } }
          : {}),
      },
      keyName: last.keyName,
    }),
  );
  for (const [position, listed] of audited.contributions.entries()) {
    listed.verified = true;
    const recorded = checked[position]?.name;
    if (recorded !== undefined) listed.name = recorded;
  }
  if (audited.final) audited.final.verified = true;
  return { records: checked, keyName: last.keyName };
}

/**
 * The chain after contribution 0 (`zero`, checked) from contribution 0: its last key, then every key
 * between; returns what the circuit's finding says it proved.
 */
export async function auditFromInitial(audit: ChainAudit, zero: CheckedKey): Promise<string> {
  const { name, chain, audited, progress, timer } = audit;
  const count = chain.contributions.length;
  const contributions = counted(count, 'contribution');
  if (count === 0 && !chain.beacon) return `${contributions}; not finalised`;
  const init = await readZkeyInfo(zero.path, 'contribution 0');
  const last = await auditLastKey(audit, zero, init);
  const between = chain.beacon ? chain.contributions : chain.contributions.slice(0, -1);
  progress({
    type: 'step',
    circuit: name,
    step: `checking the ${counted(between.length, 'key')} between: committed, their history ${last.keyName}'s`,
  });
  const hasher = new SectionHasher();
  try {
    const hashes = await hashesAhead(audit, zero, between, hasher);
    for (const [position, entry] of between.entries()) {
      const keyName = `contribution ${entry.index}`;
      const keyPath = audit.paths.zkeyPath(name, entry.index);
      try {
        const keyHashes = await timer.time('keys between: section hashes', () => hashes[position]!());
        const key = await readZkeyInfo(keyPath, keyName);
        await timer.time('keys between (history, fixed sections, δ)', () =>
          checkIntermediateKey({
            init,
            key,
            ...(zero.hashes && keyHashes ? { hashes: { init: zero.hashes, key: keyHashes } } : {}),
            index: entry.index,
            lastRecords: last.records,
            keyName,
            lastName: last.keyName,
          }),
        );
      } catch (error) {
        audited.contributions[position]!.verified = false;
        throw error;
      }
      progress({ type: 'count', circuit: name, part: 'keys between', done: position + 1, total: between.length });
    }
  } finally {
    await hasher.close();
  }
  return describeVerdict(audit, last.records, between.length);
}

/**
 * Keys hashed ahead of the one being checked: the hasher's threads stay busy, while a chain of any
 * length (the transcript is the coordinator's) holds at most this many files open and hashing at once.
 */
const HASHED_AHEAD = 2;

/**
 * Each key between's hashes, as a function its check calls in turn: a format-2 entry's by its
 * sections, the call also starting the next HASHED_AHEAD keys' so that the hasher's threads work
 * while the keys before are checked; a format-1 entry's (no section hashes) by its whole file.
 */
async function hashesAhead(
  audit: ChainAudit,
  zero: CheckedKey,
  between: readonly CircuitChain['contributions'][number][],
  hasher: SectionHasher,
): Promise<Array<() => Promise<SectionHashes | undefined>>> {
  const { name, paths } = audit;
  const layout = between.some((entry) => entry.sectionHashes) ? await contributionLayout(zero.path) : undefined;
  const started = new Map<number, Promise<SectionHashes | undefined>>();
  const start = (position: number): Promise<SectionHashes | undefined> | undefined => {
    const entry = between[position];
    if (!entry?.sectionHashes || !layout) return undefined;
    let hashing = started.get(position);
    if (!hashing) {
      const keyName = `contribution ${entry.index}`;
      const keyPath = paths.zkeyPath(name, entry.index);
      hashing = expectSectionHashes(keyPath, { ...entry, sectionHashes: entry.sectionHashes }, keyName, layout, hasher);
      // Awaited in turn; one that fails before its turn (a chain stopped early) is not left unhandled.
      hashing.catch(() => undefined);
      started.set(position, hashing);
    }
    return hashing;
  };
  return between.map((entry, position) => () => {
    for (let ahead = 1; ahead <= HASHED_AHEAD; ahead++) void start(position + ahead);
    started.delete(position - 1);
    return start(position) ?? expectKeyHashes(paths.zkeyPath(name, entry.index), entry, `contribution ${entry.index}`);
  });
}

/**
 * The layout every key between has: contribution 0's version and sections, in ascending order (snarkjs
 * writes a contribution's so, and the coordinator refuses an upload laid out otherwise:
 * core/zkey/key-table-check.ts), where contribution 0 has `snarkjs zkey new`'s order.
 */
async function contributionLayout(zeroPath: string): Promise<Pick<KeyLayout, 'version' | 'order'>> {
  try {
    const zero = await readKeyLayout(zeroPath);
    return { version: zero.version, order: [...zero.order].sort((a, b) => a - b) };
  } catch (error) {
    throw readFailure(error, `contribution 0 (${path.basename(zeroPath)})`);
  }
}

/** The circuit finding's words: what was checked, what that proves, and what it did not check. */
function describeVerdict(audit: ChainAudit, records: readonly ContributionRecord[], between: number): string {
  const { chain } = audit;
  const heldBy = chain.contributions.some((entry) => entry.sectionHashes)
    ? "section hashes, which in a contribution's layout fix every byte (their whole-file hashes not computed)"
    : 'whole-file hashes';
  const contributions = counted(chain.contributions.length, 'contribution');
  const lastName = chain.beacon ? 'the final key' : `the head (contribution ${chain.contributions.length})`;
  const checked =
    `final-key check (the default): ${lastName} against contribution 0: ` +
    `its ${counted(records.length, 'record')}' proofs of knowledge and δ steps, contribution 0's fixed sections ` +
    "and α, β, γ, and its L and H contribution 0's scaled to its δ, so it descends from every recorded contribution";
  const keysBetween =
    between === 0
      ? 'no key between'
      : `the ${counted(between, 'key')} between: held to their transcript's ${heldBy}, with contribution 0's fixed ` +
        `sections and ${lastName}'s records as their history; their L and H NOT checked (no premise of ` +
        `${lastName}; --every-link checks them)`;
  if (!chain.beacon) return `${contributions}: ${checked}; ${keysBetween}; not finalised`;
  const finalHash = chain.beacon.contributionHash.slice(0, 16);
  return `${contributions} + beacon: ${checked}; ${keysBetween}; final contribution hash ${finalHash}…`;
}
