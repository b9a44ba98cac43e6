/**
 * The ceremony's state and its public record: its phase, the transcript, the keys of its chains, the
 * queue log, and what the audit finds wrong in them.
 */
import { type ErrorEntry, OPERATOR, LEGACY_NEXT } from './error-entry.ts';

export const CEREMONY_STATE_CODES = {
  'ceremony.already_initialised': {
    kind: 'conflict',
    what: 'The ceremony is already initialised.',
    next: 'Nothing to do.',
  },
  'ceremony.not_initialised': { kind: 'conflict', what: 'The ceremony has not been set up yet.', next: OPERATOR },
  'ceremony.locked': {
    kind: 'conflict',
    what: 'The ceremony is busy with another operation.',
    next: 'Wait a moment and try again.',
  },
  /** `ceremony serve` on a data folder another coordinator serves. */
  'ceremony.already_served': {
    kind: 'conflict',
    what: 'Another coordinator already serves this ceremony.',
    next: 'Stop it first, or give this one a data folder of its own.',
  },
  /**
   * A contribution made on the data folder outside the coordinator's queue, once its queue log has
   * begun (the local `ceremony contribute`): the audit would find a link with no acceptance in the log.
   */
  'ceremony.outside_queue_log': {
    kind: 'conflict',
    what:
      'A contribution made on the coordinator’s data folder, outside its queue, was refused: ' +
      'the audit would fail it.',
    next:
      'Contribute through the coordinator’s queue (`ceremony contribute --coordinator URL`), ' +
      'as every contributor does.',
  },
  'ceremony.finalised': {
    kind: 'conflict',
    what: 'The ceremony is finalised; it takes no more contributions.',
    next: 'Thank you. See the public ceremony page for the final keys.',
  },
  'ceremony.not_open': {
    kind: 'conflict',
    what: 'The ceremony is not open for contributions right now.',
    next: 'Your place is kept while it is paused; come back when the coordinator opens it.',
  },
  'ceremony.not_closed': {
    kind: 'conflict',
    what: 'The ceremony is still taking contributions, so it cannot be finalised yet.',
    next: 'Close the ceremony first, then finalise.',
  },
  'ceremony.invalid_phase_change': {
    kind: 'conflict',
    what: 'The ceremony cannot move from its current phase to that one.',
    next: 'Reload the console to see the current phase.',
  },
  'transcript.corrupt': {
    kind: 'operator',
    what: 'The ceremony’s transcript on the server is damaged.',
    next: OPERATOR,
  },
  /**
   * A transcript of format 1 (whole-file hashes only, no section hashes) read by a check that needs
   * format 2, without --allow-legacy-transcript: it proves less, and a new ceremony never writes it.
   */
  'transcript.legacy_format': {
    kind: 'refusal',
    what:
      'The ceremony’s transcript is of the old format 1, which records whole-file hashes only, so this check ' +
      'cannot prove everything it names.',
    next: LEGACY_NEXT,
  },
  /** A transcript whose format-1 entries (an init, say) are followed by format-2 ones, without the legacy flag. */
  'transcript.mixed_format': {
    kind: 'refusal',
    what: 'The ceremony’s transcript mixes old format-1 entries with format-2 ones, so some checks cannot run.',
    next: LEGACY_NEXT,
  },
  /** The transcript's identifier (the hash of its last entry) is not the one given with --identifier. */
  'transcript.identifier_mismatch': {
    kind: 'refusal',
    what:
      'The ceremony’s identifier is not the one you compared: this is another transcript than the one you were ' +
      'given.',
    next: 'Compare identifiers with the other readers again; if yours came from them, report the difference publicly.',
  },
  'chain.file_missing': { kind: 'operator', what: 'A key of the chain is missing on the server.', next: OPERATOR },
  'chain.file_unreadable': {
    kind: 'operator',
    what: 'A key of the chain on the server cannot be read.',
    next: OPERATOR,
  },
  'chain.file_hash_mismatch': {
    kind: 'operator',
    what: 'A key of the chain on the server does not match the transcript.',
    next: OPERATOR,
  },
  /**
   * A (format-2) transcript entry's hash of one of its key's sections is not the hash of that
   * section of the file it names: the entry commits to other bytes than the key has.
   */
  'transcript.section_hash_mismatch': {
    kind: 'operator',
    what: 'The public transcript records other contents for part of a key than the key file has.',
    next: 'Do not use this ceremony’s keys; report it publicly.',
  },
  /** The audit: a published contribution 0 is not what `zkey new` makes of the r1cs and the ptau. */
  'audit.initial_key_mismatch': {
    kind: 'operator',
    what: 'A published first key is not the one the circuit and the powers of tau produce.',
    next: OPERATOR,
  },
  /**
   * The audit: a point of contribution 0's B2 lies outside G2's order-r subgroup (a small-order
   * part leaks witness bits from every proof).
   */
  'audit.b2_outside_subgroup': {
    kind: 'operator',
    what:
      'A published first key has points outside the group the proofs use, ' +
      'which would leak parts of every prover’s secrets.',
    next: OPERATOR,
  },
  /** The audit: the ptau is neither a known public one (core/ptau/known-ptau-files.json) nor pinned (--ptau-hash). */
  'audit.ptau_unpinned': {
    kind: 'operator',
    what: 'The audit does not know the powers-of-tau file: it is not a known public one and no hash was given for it.',
    next: 'Check where the file comes from, then run the audit again with --ptau-hash and its BLAKE2b-512.',
  },
  /** The audit: the ptau is not the file the auditor pinned with --ptau-hash. */
  'audit.ptau_hash_mismatch': {
    kind: 'operator',
    what: 'The powers-of-tau file is not the one the auditor pinned.',
    next: 'Get the pinned file (or pin the right hash) and run the audit again.',
  },
  /** The audit: an r1cs pinned neither by the auditor's ceremony.json (`r1csHash`) nor by --r1cs-hash. */
  'audit.r1cs_unpinned': {
    kind: 'operator',
    what: 'The audit cannot vouch for a circuit file: neither your ceremony.json nor --r1cs-hash pins its hash.',
    next:
      'Compile the circuit from its sources yourself, then pin it: --r1cs-hash CIRCUIT=HASH, or r1csHash in your ' +
      'ceremony.json.',
  },
  /** The audit: a ptau section the check of contribution 0 relies on is not derived from the ptau's powers of tau. */
  'audit.ptau_inconsistent': {
    kind: 'operator',
    what: 'The powers-of-tau file’s prepared sections do not follow from its powers of tau.',
    next: 'Do not use this ceremony’s keys; the file may have been forged.',
  },
  /** The audit: a chain was finalised with fewer contributions than ceremony.json's minContributions. */
  'audit.too_few_contributions': {
    kind: 'operator',
    what: 'A circuit was finalised with fewer contributions than the ceremony requires.',
    next: 'Do not use that circuit’s final key; its secret may be known.',
  },
  /** The audit: a final beacon hashed more times than the auditor agreed to derive (--max-beacon-iterations). */
  'audit.beacon_too_costly': {
    kind: 'operator',
    what: 'A final beacon is hashed more times than the audit was allowed to spend on it.',
    next: 'If that is the announced beacon, audit again with a higher --max-beacon-iterations.',
  },
  /** The public queue log is not one: an entry of an unknown shape, or its hash chain broken. */
  'queue_log.corrupt': {
    kind: 'operator',
    what: 'The public queue log is damaged: an entry is malformed or its hash chain is broken.',
    next: 'Report it publicly: the log was changed after the fact.',
  },
  /**
   * The audit: the queue log grants a circuit's turn to someone other than the one its rules put first
   * (FIFO, away and cooling-down entries passed over); the finding names the entries.
   */
  'audit.turn_out_of_order': {
    kind: 'operator',
    what: 'The queue log shows a turn given to someone other than the one first in line.',
    next: 'Report it publicly with the entries the audit names.',
  },
  /**
   * The audit: a step of the queue log its rules do not allow (an acceptance or refusal with no turn, a
   * turn ended before its time, a cooldown or a removal not as the rules say); the finding names the entries.
   */
  'audit.queue_rule_broken': {
    kind: 'operator',
    what: 'The queue log shows a step the lobby’s rules do not allow.',
    next: 'Report it publicly with the entries the audit names.',
  },
  /** The audit: the queue log and the transcript disagree (an acceptance and the transcript's link). */
  'audit.queue_log_mismatch': {
    kind: 'operator',
    what: 'The queue log and the transcript disagree about a contribution.',
    next: 'Report it publicly with the entries the audit names.',
  },
  /**
   * The audit: the publication has no queue log, so the order of turns cannot be checked, and the
   * auditor did not say the ceremony had none (--no-queue-log).
   */
  'audit.queue_log_missing': {
    kind: 'operator',
    what: 'The publication has no queue log: the order of turns cannot be checked.',
    next:
      'Ask the coordinator for transcript/queue-log.jsonl; audit with --no-queue-log only for a ceremony made ' +
      'without the coordinator’s lobby.',
  },
  /**
   * The audit: the ceremony is not finished (a chain without its beacon, no `finalised` entry), and
   * the auditor did not ask for an audit of a running ceremony (--in-progress).
   */
  'audit.not_finalised': {
    kind: 'operator',
    what: 'The ceremony is not finished: some circuit has no final key, or the transcript does not close it.',
    next: 'Audit again once it is finalised, or with --in-progress to check a running ceremony.',
  },
  /** The audit: the `finalised` entry commits no compiler record or verifier sources (a ceremony finalised before). */
  'audit.verifier_files_uncommitted': {
    kind: 'operator',
    what: 'The transcript does not commit the ceremony’s compiler record and verifier sources.',
    next: 'Check each deployment against the final keys with your own compiler settings (--compiler-settings).',
  },
  /**
   * The audit: final/compiler.json or a final/Verifier*.sol is not what the `finalised` entry commits, or not the
   * final key's.
   */
  'audit.verifier_files_mismatch': {
    kind: 'operator',
    what:
      'The published compiler record or a verifier source is not the one the transcript commits ' +
      'or the final key gives.',
    next: 'Do not deploy from the published sources; render the verifiers from the final keys yourself.',
  },
  /**
   * A verification key (a final key, a manifest's key, a deployed verifier) whose δ equals its γ:
   * no Phase 2, every proof forgeable.
   */
  'vkey.delta_equals_gamma': {
    kind: 'operator',
    what: 'A verification key never went through Phase 2 (its δ equals its γ): anyone can forge its proofs.',
    next: 'Do not deploy or use that key.',
  },
} satisfies Record<string, ErrorEntry>;
