/**
 * The parts of an audit's report (audit-ceremony.ts's AuditReport) that the audit's steps fill in:
 * a finding, a circuit's chain, the ptau. Their own module so that the steps (audit-chain.ts,
 * audit-pins.ts, check-beacon-announcement.ts, …) name them without importing the audit that
 * imports them.
 */
import type { ErrorCode } from '../errors.ts';

export interface AuditFinding {
  /** A circuit name, or `ptau`, `inputs`, `ptau sections`, `transcript`, `manifest`. */
  subject: string;
  ok: boolean;
  summary: string;
  /** The error code of a failed finding. */
  code?: ErrorCode;
}

/** One contribution of a chain, as the transcript records it and the audit verified it. */
export interface AuditedContribution {
  /** Position in the chain: 1 for the first contribution after contribution 0. */
  index: number;
  /** Who contributed, as the transcript names them. */
  contributor: string;
  /** The name written in the contribution's record in the key (`--name`), when it has one and was read. */
  name?: string;
  /** The contribution hash snarkjs prints to the contributor (BLAKE2b-512, hex). */
  contributionHash: string;
  /** True once the link to it verified. */
  verified: boolean;
}

export interface AuditedCircuit {
  name: string;
  verifier: string;
  r1cs: {
    /** As written in ceremony.json. */
    path: string;
    /** BLAKE2b-512 of the file (undefined when it could not be read). */
    blake2b512?: string;
    /**
     * Who pinned this hash: `ceremony.json` (the r1csHash of the auditor's own, which the publication's
     * equals) and/or `auditor` (--r1cs-hash). An audit with an r1cs pinned by neither fails.
     */
    pinnedBy: Array<'ceremony.json' | 'auditor'>;
  };
  minContributions: number;
  /**
   * How the chain was checked: `final-key`, the default (its last key against contribution 0 and its
   * records; the keys between as committed files whose history is the last key's, their L and H not
   * checked), or `every-link` (--every-link: every key against the one before it, L and H included).
   */
  check: ChainCheck;
  /** Every contribution the transcript records for this chain, in order. */
  contributions: AuditedContribution[];
  /**
   * Set when contribution 0 was not checked in this audit because this machine had checked the
   * same contribution 0, r1cs and ptau (their hashes computed in this audit) with this version of
   * the check: when, and which version (verified-initial-key-memo.ts).
   */
  initialKeyRemembered?: { checkedAt: string; checkVersion: number };
  /** The final beacon link, once the chain is finalised. */
  final?: { contributionHash: string; beacon: string; iterationsExp: number; verified: boolean };
}

export interface AuditedPtau {
  /** As written in ceremony.json (or the file given with --ptau). */
  path: string;
  blake2b512: string;
  /**
   * True when the ptau is pinned (a known public file, --ptau-hash, or the auditor's ceremony.json's
   * ptauHash); an audit of an unpinned one fails.
   */
  pinned: boolean;
  /** The known public file it is (core/ptau/known-ptau-files.json), if it is one. */
  known?: { file: string; power: number; url: string };
  /** True when the auditor pinned it with --ptau-hash. */
  pinnedByAuditor: boolean;
  /** True when the auditor's own ceremony.json pins it (`ptauHash`). */
  pinnedByConfig: boolean;
  /** True for the development ptau (its secret is public: test networks only). */
  insecure: boolean;
  /** The sections checked against the powers of τ (check-ptau-sections.ts), once they passed. */
  sectionsChecked?: string[];
  /**
   * Set when the sections were not checked in this audit because this machine had checked this
   * very file (its hash computed in this audit) with this version of the check: when, and which
   * version (verified-ptau-memo.ts).
   */
  sectionsRemembered?: { checkedAt: string; checkVersion: number };
}

/** How a chain's keys after contribution 0 are checked (AuditedCircuit.check). */
export type ChainCheck = 'final-key' | 'every-link';
