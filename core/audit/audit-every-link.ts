/**
 * The audit of a chain link by link (`ceremony audit --every-link`): after contribution 0, every
 * link is verified incrementally, in one pass (verify-link-from-head.ts): 0→1→…→K→final under one
 * random challenge key drawn for this chain's audit alone (crypto.randomBytes, 32 bytes, held in
 * memory and never written, logged or returned). The combination R_k = Σ r_i·P_i of key k's L‖H
 * computed when k was checked as NEXT is carried forward as the `head` of link k→k+1, so a chain
 * of K links (the beacon link included) costs K+1 MSMs instead of 2K. Each key's L and H are read
 * once, from the file whose hash was just checked against its transcript entry; its fixed sections
 * are compared with its head's by the section hashes this audit computed from both files' bytes.
 *
 * Soundness. Contribution 0 is honest (its check, check-initial-key.ts). Induction along the chain:
 * if key k is honest (its L‖H are δ_k-scaled from contribution 0), link k→k+1 is accepted only if
 * e(R_{k+1}, δ2_{k+1}) = e(R_k, δ2_k); with d_i = dlog(s·N_i − P_i) as in verify-link-from-head.ts
 * this says Σ r_i·d_i = 0 mod p. The files are all fixed (published) before the key is drawn, and
 * the key is fresh for every audit, so no adaptive argument is needed: for each link whose L‖H
 * cheat (some d_i ≠ 0), the check passes for at most one value of one uniform 64-bit r_i, ≤ 2^-64
 * (ChaCha20's keystream taken as random). A union bound over the K links of a chain gives ≤ K/2^64.
 * Reusing the scalars across the links of one chain costs nothing: each link's bound only needs its
 * r_i uniform and independent of the (fixed) files. Everything else a link needs (structure,
 * proofs of knowledge, δ in G1 and G2, points on the curve, the beacon's parameters and key) is
 * checked deterministically by verifyLinkFromHead. What this proves beyond the default check (every
 * key between is a valid key of its δ, its L and H included): docs/audit.md.
 */
import { randomBytes } from 'node:crypto';
import { CoordinatorError } from '../errors.ts';
import type { SectionHashes } from '../zkey/zkey-hashes.ts';
import { verifyLinkFromHead } from '../link-check/verify-link-from-head.ts';
import type { LinkCombination } from '../link-check/link-combination-cache.ts';
import { counted, expectKeyHashes, type ChainAudit, type CheckedKey } from './chain-audit-context.ts';

/** The last key a chain's links reached, with its link combination. */
interface VerifiedHead extends CheckedKey {
  combination: LinkCombination | undefined;
}

/** What a link-by-link audit shares along the chain. */
interface LinkAudit extends ChainAudit {
  /** The auditor's own randomness for this chain's link checks (see the header). */
  challengeKey: Buffer;
  /** Links to verify: every contribution, and the beacon if any (for the progress count). */
  links: number;
}

/**
 * The section hashes of both keys of a link as this audit computed them from their bytes (never
 * the transcript's): the link's structure check then compares the fixed sections by them instead
 * of reading over a gigabyte of each key again at 2^22 (check-link-structure.ts).
 */
function knownHashes(head: SectionHashes | undefined, candidate: SectionHashes | undefined) {
  return head && candidate ? { sectionHashes: { head, candidate } } : {};
}

/** Every contribution's link, in order, from contribution 0; returns the last key reached. */
async function auditContributionLinks(audit: LinkAudit, from: VerifiedHead): Promise<VerifiedHead> {
  const { name, chain, audited, progress, timer } = audit;
  progress({ type: 'step', circuit: name, step: `verifying ${counted(audit.links, 'link')} in one pass` });
  progress({ type: 'count', circuit: name, part: 'links', done: 0, total: Math.max(audit.links, 1) });
  let previous = from;
  for (const [position, entry] of chain.contributions.entries()) {
    const current = audit.paths.zkeyPath(name, entry.index);
    const hashes = await timer.time('key hashes (file and sections)', () =>
      expectKeyHashes(current, entry, `contribution ${entry.index}`),
    );
    const link = await timer.time('links (structure, L and H sums, pairings)', () =>
      verifyLinkFromHead(previous.path, current, {
        ...knownHashes(previous.hashes, hashes),
        challenge: { key: audit.challengeKey, head: previous.combination },
        labels: { prev: `contribution ${entry.index - 1}`, next: `contribution ${entry.index}` },
      }),
    );
    if (link.contributionHash !== entry.contributionHash) {
      throw new CoordinatorError(
        'transcript.corrupt',
        `contribution ${entry.index}: the transcript records a different contribution hash`,
      );
    }
    const listed = audited.contributions[position]!;
    listed.verified = true;
    if (link.recordedName !== undefined) listed.name = link.recordedName;
    previous = { path: current, hashes, combination: link.combination };
    progress({ type: 'count', circuit: name, part: 'links', done: entry.index, total: Math.max(audit.links, 1) });
  }
  return previous;
}

/** The beacon's link from the last contribution to the final key; returns the final contribution hash. */
async function auditBeaconLink(audit: LinkAudit, from: VerifiedHead): Promise<string> {
  const { name, chain, paths, timer } = audit;
  const beacon = chain.beacon!;
  const finalPath = paths.finalZkeyPath(name);
  const finalHashes = await timer.time('key hashes (file and sections)', () =>
    expectKeyHashes(finalPath, beacon, 'the final key'),
  );
  const link = await timer.time('links (structure, L and H sums, pairings)', () =>
    verifyLinkFromHead(from.path, finalPath, {
      ...knownHashes(from.hashes, finalHashes),
      challenge: { key: audit.challengeKey, head: from.combination },
      expect: { kind: 'beacon', beaconHex: beacon.beacon, iterationsExp: beacon.iterationsExp },
      labels: { prev: `contribution ${chain.contributions.length}`, next: 'the final key' },
    }),
  );
  if (link.contributionHash !== beacon.contributionHash) {
    throw new CoordinatorError(
      'transcript.corrupt',
      'the final key: the transcript records a different beacon contribution hash',
    );
  }
  audit.audited.final!.verified = true;
  audit.progress({ type: 'count', circuit: name, part: 'links', done: audit.links, total: audit.links });
  return link.contributionHash;
}

/**
 * Every link of the chain after contribution 0 (`zero`, checked), the beacon's included once
 * finalised; returns what the circuit's finding says it proved.
 */
export async function auditEveryLink(chainAudit: ChainAudit, zero: CheckedKey): Promise<string> {
  const { chain } = chainAudit;
  const audit: LinkAudit = {
    ...chainAudit,
    // Never stored, so no one can have chosen the published files knowing it (see the header).
    challengeKey: randomBytes(32),
    links: chain.contributions.length + (chain.beacon ? 1 : 0),
  };
  const head = await auditContributionLinks(audit, { ...zero, combination: undefined });
  const contributions = counted(chain.contributions.length, 'contribution');
  const proves =
    "verified link by link (--every-link): every key's history, proof of knowledge and δ, and its L and H " +
    'against the key before it, so every key between is a valid key of its δ';
  if (!chain.beacon) return `${contributions} ${proves}; not finalised`;
  const finalHash = await auditBeaconLink(audit, head);
  return `${contributions} + beacon ${proves}, final contribution hash ${finalHash.slice(0, 16)}…`;
}
