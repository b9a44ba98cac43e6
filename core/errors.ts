/**
 * The one error family of the project, and the one list of its codes. Every refusal carries a
 * stable string code that the CLI prints, the coordinator sends and the browser explains, so a code
 * means the same thing to a contributor's browser, an auditor's terminal and a test. Each code says
 * here what it means beyond its text (is it a verdict on a contribution? is it the caller's
 * mistake?); the HTTP status of each is the server's business (server/http/error-status.ts).
 *
 * Three codes say "you asked wrongly", one per kind of caller:
 *  - `usage.invalid_arguments`: the command line of `ceremony …` (arguments, options);
 *  - `input.*`: a file a command was given to read (missing, not JSON, not the shape it must have);
 *  - `request.invalid`: an HTTP request to the coordinator (body, parameters, query).
 */

/** What a code means beyond its name. Absent means false. */
export interface ErrorCodeTraits {
  /**
   * A verdict on a candidate zkey: it can never be the next link of its chain. The verifier
   * returns it as an answer that is never retried; anything else a verifier throws is a problem of
   * the verifier (I/O, a crash), retried, and decides nothing about the contribution.
   */
  readonly refusesContribution?: true;
  /** The caller asked wrongly (command-line arguments or an input file): the CLI exits 2, not 1. */
  readonly usage?: true;
}

const USAGE = { usage: true } as const;
const REFUSES = { refusesContribution: true } as const;
const PLAIN = {} as const;

/** Every error code. Add new codes here, never elsewhere (the compiler then asks for their status and plain words). */
const ERROR_CODES = {
  // The caller of the `ceremony` command: its arguments and the files it was given
  'usage.invalid_arguments': USAGE,
  'input.file_not_found': USAGE,
  'input.not_json': USAGE,
  'input.invalid': USAGE,

  // Ceremony configuration and setup
  'config.not_found': PLAIN,
  'config.invalid': PLAIN,
  /** A native module (better-sqlite3) built for another Node, or unloadable: `npm rebuild` with the Node that runs. */
  'runtime.native_module_mismatch': PLAIN,
  'circuit.unknown': PLAIN,
  'r1cs.malformed': PLAIN,
  'circuit.public_inputs_mismatch': PLAIN,
  'ptau.malformed': PLAIN,
  'ptau.not_prepared': PLAIN,
  'ptau.too_small': PLAIN,
  'ptau.insecure': PLAIN,
  /** An r1cs whose BLAKE2b-512 is not the one ceremony.json (or the auditor) pins for its circuit. */
  'r1cs.hash_mismatch': PLAIN,
  /** A ptau whose BLAKE2b-512 is not the one ceremony.json pins (`ptauHash`): `init`, and `fetch` by the auditor's. */
  'ptau.hash_mismatch': PLAIN,
  /**
   * `audit`, `fetch`: the publication's ceremony.json (or the ceremony a coordinator serves) differs from the
   * auditor's own (their checkout's, or --config) in a field the audit relies on; the message names the first.
   */
  'config.publication_mismatch': PLAIN,

  // Ceremony state
  'ceremony.already_initialised': PLAIN,
  'ceremony.not_initialised': PLAIN,
  'ceremony.locked': PLAIN,
  /** `ceremony serve` on a data folder another coordinator serves. */
  'ceremony.already_served': PLAIN,
  /**
   * A contribution made on the data folder outside the coordinator's queue, once its queue log has
   * begun (the local `ceremony contribute`): the audit would find a link with no acceptance in the log.
   */
  'ceremony.outside_queue_log': PLAIN,
  'ceremony.finalised': PLAIN,
  'ceremony.not_open': PLAIN,
  'ceremony.not_closed': PLAIN,
  'ceremony.invalid_phase_change': PLAIN,
  'transcript.corrupt': PLAIN,
  /**
   * A transcript of format 1 (whole-file hashes only, no section hashes) read by a check that needs
   * format 2, without --allow-legacy-transcript: it proves less, and a new ceremony never writes it.
   */
  'transcript.legacy_format': PLAIN,
  /** A transcript whose format-1 entries (an init, say) are followed by format-2 ones, without the legacy flag. */
  'transcript.mixed_format': PLAIN,
  /** The transcript's identifier (the hash of its last entry) is not the one given with --identifier. */
  'transcript.identifier_mismatch': PLAIN,
  'chain.file_missing': PLAIN,
  'chain.file_unreadable': PLAIN,
  'chain.file_hash_mismatch': PLAIN,
  /**
   * A (format-2) transcript entry's hash of one of its key's sections is not the hash of that
   * section of the file it names: the entry commits to other bytes than the key has.
   */
  'transcript.section_hash_mismatch': PLAIN,
  /** The audit: a published contribution 0 is not what `zkey new` makes of the r1cs and the ptau. */
  'audit.initial_key_mismatch': PLAIN,
  /**
   * The audit: a point of contribution 0's B2 lies outside G2's order-r subgroup (a small-order
   * part leaks witness bits from every proof).
   */
  'audit.b2_outside_subgroup': PLAIN,
  /** The audit: the ptau is neither a known public one (core/ptau/known-ptau-files.json) nor pinned (--ptau-hash). */
  'audit.ptau_unpinned': PLAIN,
  /** The audit: the ptau is not the file the auditor pinned with --ptau-hash. */
  'audit.ptau_hash_mismatch': PLAIN,
  /** The audit: an r1cs pinned neither by the auditor's ceremony.json (`r1csHash`) nor by --r1cs-hash. */
  'audit.r1cs_unpinned': PLAIN,
  /** The audit: a ptau section the check of contribution 0 relies on is not derived from the ptau's powers of tau. */
  'audit.ptau_inconsistent': PLAIN,
  /** The audit: a chain was finalised with fewer contributions than ceremony.json's minContributions. */
  'audit.too_few_contributions': PLAIN,
  /** The audit: a final beacon hashed more times than the auditor agreed to derive (--max-beacon-iterations). */
  'audit.beacon_too_costly': PLAIN,
  /** The public queue log is not one: an entry of an unknown shape, or its hash chain broken. */
  'queue_log.corrupt': PLAIN,
  /**
   * The audit: the queue log grants a circuit's turn to someone other than the one its rules put first
   * (FIFO, away and cooling-down entries passed over); the finding names the entries.
   */
  'audit.turn_out_of_order': PLAIN,
  /**
   * The audit: a step of the queue log its rules do not allow (an acceptance or refusal with no turn, a
   * turn ended before its time, a cooldown or a removal not as the rules say); the finding names the entries.
   */
  'audit.queue_rule_broken': PLAIN,
  /** The audit: the queue log and the transcript disagree (an acceptance and the transcript's link). */
  'audit.queue_log_mismatch': PLAIN,
  /**
   * The audit: the publication has no queue log, so the order of turns cannot be checked, and the
   * auditor did not say the ceremony had none (--no-queue-log).
   */
  'audit.queue_log_missing': PLAIN,
  /**
   * The audit: the ceremony is not finished (a chain without its beacon, no `finalised` entry), and
   * the auditor did not ask for an audit of a running ceremony (--in-progress).
   */
  'audit.not_finalised': PLAIN,
  /** The audit: the `finalised` entry commits no compiler record or verifier sources (a ceremony finalised before). */
  'audit.verifier_files_uncommitted': PLAIN,
  /**
   * The audit: final/compiler.json or a final/Verifier*.sol is not what the `finalised` entry commits, or not the
   * final key's.
   */
  'audit.verifier_files_mismatch': PLAIN,
  /**
   * A verification key (a final key, a manifest's key, a deployed verifier) whose δ equals its γ:
   * no Phase 2, every proof forgeable.
   */
  'vkey.delta_equals_gamma': PLAIN,

  // Deployed verifier contracts against the ceremony (`ceremony verify-deployment --ceremony`, `--compare`): each
  // a MISMATCH of one verifier, named with it
  /**
   * A ceremony folder whose ceremony.json names other circuits than the transcript's chains, or a verifier name the
   * transcript's `finalised` entry does not commit for that circuit's final key (names swapped, a circuit dropped).
   */
  'deployment.verifier_name_mismatch': PLAIN,
  /** A constant of the final verification key (α1, β2, γ2, δ2, an IC point) is not in the deployed runtime code. */
  'deployment.constant_mismatch': PLAIN,
  /** The deployed runtime code is not the recompiled verifier of the final key (metadata trailer aside). */
  'deployment.bytecode_mismatch': PLAIN,
  /**
   * The deployed code could not be compared with the recompiled verifier (no committed compiler record, one outside
   * the documented settings, or a source solc did not compile): a MISMATCH, since its constants alone prove little.
   */
  'deployment.not_recompiled': PLAIN,
  /** A compiler record (final/compiler.json) that is not one, or holds a field or value outside the documented set. */
  'compiler.record_invalid': PLAIN,
  /** A verifier's runtime code on the second network (`--compare`) is not its code on the first. */
  'deployment.networks_differ': PLAIN,
  /** A manifest entry is not the δ of its final key, or names no verifier of the ceremony, or one is missing. */
  'deployment.manifest_mismatch': PLAIN,
  /** No contract code at the verifier's address. */
  'deployment.no_contract': PLAIN,
  /** The JSON-RPC endpoint could not be reached, or its eth_getCode failed. */
  'deployment.rpc_unavailable': PLAIN,
  /** `verify-receipt --deployment`: the verifiers file names no verifier of a receipt's circuit. */
  'deployment.no_verifier': PLAIN,
  /** `verify-receipt --deployment`: the receipt's circuit has no final key yet, so no verifier can carry it. */
  'deployment.not_finalised': PLAIN,
  /** The JSON-RPC endpoint reports another chain id than the one asked for (`--chain-id`, `--compare-chain-id`). */
  'deployment.wrong_chain': PLAIN,
  /**
   * A test-network ceremony's keys (ptau secret public) checked against a mainnet's verifiers, without
   * `--allow-test-ceremony`.
   */
  'deployment.test_ceremony_on_mainnet': PLAIN,

  // A candidate zkey that is refused as the next link of a chain
  'zkey.malformed': REFUSES,
  /**
   * An uploaded whole key whose section table is not the one a contribution on the head has (the head's ten ids in
   * ascending order, its sizes but the history's, one record longer): refused before a byte of it is hashed.
   */
  'zkey.section_table_mismatch': REFUSES,
  'zkey.not_groth16': REFUSES,
  /** A skeleton (zkey-delta-v1) that is not one contribution on top of the head; the message names the rule. */
  'delta.malformed': REFUSES,
  /** A skeleton made on an earlier head than the chain's (downloaded before another contribution landed). */
  'delta.stale_head': REFUSES,
  'contribution.wrong_circuit': REFUSES,
  'contribution.header_mismatch': REFUSES,
  'contribution.stale': REFUSES,
  'contribution.no_new_contribution': REFUSES,
  'contribution.multiple_new_contributions': REFUSES,
  'contribution.history_mismatch': REFUSES,
  'contribution.unexpected_type': REFUSES,
  'contribution.delta_unchanged': REFUSES,
  'contribution.delta_mismatch': REFUSES,
  'contribution.invalid_proof_of_knowledge': REFUSES,
  'contribution.l_section_invalid': REFUSES,
  'contribution.h_section_invalid': REFUSES,
  'contribution.point_not_on_curve': REFUSES,
  /**
   * The candidate's L or H holds the point at infinity elsewhere than the head's (an honest contribution keeps them).
   */
  'contribution.identity_pattern_changed': REFUSES,
  'contribution.invalid': REFUSES,
  /** Verified, but another link was committed first: it can no longer extend the chain. */
  'contribution.not_next': REFUSES,

  // Finalisation
  'finalise.bad_beacon': PLAIN,
  'finalise.bad_iterations': PLAIN,
  /** A chain has fewer contributions than ceremony.json's minContributions (≥ 1), so it may not be finalised. */
  'finalise.too_few_contributions': PLAIN,
  'finalise.beacon_mismatch': PLAIN,
  'finalise.verification_failed': PLAIN,
  /** The beacon is announced: contributions are closed (and it is announced once, before any beacon is applied). */
  'ceremony.beacon_announced': PLAIN,
  /** The block a beacon announcement would name is mined already, or too close to be unknown when seen. */
  'beacon.block_too_soon': PLAIN,
  /** The announced block is not mined yet, or has fewer confirmations than asked for: no beacon yet. */
  'beacon.block_not_final': PLAIN,
  /** The RPC endpoint given for the beacon's block serves another chain than the announcement names. */
  'beacon.wrong_chain': PLAIN,
  /** The RPC endpoint given for the beacon's block did not answer. */
  'beacon.rpc_unavailable': PLAIN,
  /** A final key's beacon is not the hash of the announced block (the audit, over RPC). */
  'audit.beacon_not_announced': PLAIN,

  // Coordinator server: requests, sign-in, lobby, uploads
  'request.invalid': PLAIN,
  'request.too_large': PLAIN,
  /** A URL of a file that never changes (a key, the inputs, the ptau, …) with a query string: caches would miss. */
  'request.query_not_allowed': PLAIN,
  not_found: PLAIN,
  /** Anything that is not a CoordinatorError: the details go to the coordinator's log, never out. */
  internal: PLAIN,
  'manifest.not_finalised': PLAIN,
  'auth.required': PLAIN,
  'auth.below_minimum': PLAIN,
  'auth.github_failed': PLAIN,
  'auth.invalid_proof': PLAIN,
  'auth.challenge_unknown': PLAIN,
  'auth.wrong_scope': PLAIN,
  'auth.unknown_root': PLAIN,
  'auth.root_expired': PLAIN,
  'auth.not_coordinator': PLAIN,
  'auth.csrf': PLAIN,
  'auth.demo_disabled': PLAIN,
  /**
   * GitHub device flow (`ceremony contribute --github`): not authorized at GitHub yet; poll again after the interval.
   */
  'auth.device_pending': PLAIN,
  /** GitHub device flow: polled faster than the interval; wait 5 s longer between polls (RFC 8628). */
  'auth.device_slow_down': PLAIN,
  /** GitHub device flow: the code expired, or the handle is unknown or already used; start again. */
  'auth.device_expired': PLAIN,
  /** GitHub device flow: the person cancelled the authorization at GitHub. */
  'auth.device_denied': PLAIN,
  'rate.limited': PLAIN,
  /** GET /api/ceremony and /api/transcript: too many whole answers to this address in the window. */
  'rate.ceremony_reads': PLAIN,
  /** PATCH and HEAD of contribution uploads: too many by this contributor in the window (RATE_LIMIT_UPLOAD_REQUESTS) */
  'rate.upload_requests': PLAIN,
  /** GET /api/me, presence streams opened, heartbeats: too many from this contributor in the window. */
  'rate.contributor_requests': PLAIN,
  /** GET /api/me/receipts: too many from this contributor in the window. */
  'rate.receipt_reads': PLAIN,
  /** File downloads in progress at once: this address (or a turn's holder) has as many as it may. */
  'download.too_many_in_progress': PLAIN,
  /** File downloads in progress at once: the coordinator serves as many as its file descriptors allow. */
  'download.server_busy': PLAIN,
  /** Sign-ins started from one client address and not finished (GitHub states, Semaphore challenges) at most. */
  'auth.too_many_in_progress': PLAIN,
  /**
   * POST /auth/semaphore: the coordinator verifies as many proofs at once as SEMAPHORE_MAX_PROOF_CHECKS allows;
   * refused before the challenge is spent, so the same proof may be sent again.
   */
  'auth.proof_checks_busy': PLAIN,
  'lobby.already_contributed': PLAIN,
  'lobby.not_your_turn': PLAIN,
  'lobby.not_queued': PLAIN,
  /** POST /api/me/join more often than RATE_LIMIT_JOIN a window: each join is logged for good. */
  'lobby.too_many_joins': PLAIN,
  /** GET /api/me/presence: this contributor already holds as many presence streams as one may. */
  'presence.too_many_streams': PLAIN,
  /** GET /api/me/presence: the coordinator holds as many presence streams as it takes; poll instead. */
  'presence.streams_full': PLAIN,
  'upload.too_large': PLAIN,
  'upload.too_small': PLAIN,
  'upload.length_required': PLAIN,
  'upload.submitting': PLAIN,
  /** A PATCH or DELETE to an upload whose last byte arrived: it is being handed in, or was. */
  'upload.complete': PLAIN,
  'upload.disk_full': PLAIN,
  'upload.failed': PLAIN,
  /** tus: a PATCH at another offset than the upload's (ask for it with HEAD, resume from there). */
  'upload.offset_conflict': PLAIN,
  /** tus: no upload at this URL (never made, replaced by a newer one, swept, or handed in). */
  'upload.not_found': PLAIN,
  /** tus: a request the protocol does not allow (a header missing or malformed, an extension not offered). */
  'upload.protocol_error': PLAIN,
  'verification.unavailable': PLAIN,
  'metrics.forbidden': PLAIN,
  /**
   * A contribution or turn asked to move where its life cycle does not go: a coordinator bug, never the contributor's
   * doing.
   */
  'lifecycle.illegal_transition': PLAIN,

  // `ceremony publish`
  'publish.out_exists': PLAIN,

  // `ceremony backup`
  /** The folder to back up into exists already: a backup is always a new folder. */
  'backup.out_exists': PLAIN,
  /** `--link-dest` names a folder that is no backup of this ceremony (no backup.json, another ceremony). */
  'backup.not_a_backup': USAGE,

  // `ceremony fetch`: an auditor's copy of what a coordinator publishes
  /** The folder to fetch into holds files already (and --resume was not given). */
  'fetch.dir_not_empty': PLAIN,
  /**
   * A request to the coordinator failed: no answer, an HTTP error, a download cut off, a rate limit
   * that outlasts the retries.
   */
  'fetch.http_error': PLAIN,
  /** The coordinator answered something its API never answers (not JSON, an entry of no known shape). */
  'fetch.bad_answer': PLAIN,
  /** The coordinator's transcript is of another ceremony than the auditor's ceremony.json (id, circuits). */
  'fetch.other_ceremony': PLAIN,

  // Checking a signed receipt (`ceremony verify-receipt`, the public page): one code per way a
  // receipt can fail to be in the keys, so a contributor (and a test) tells them apart.
  /** The receipts file is not a receipt, a list of them, or the file the page or /api/me/receipts gives. */
  'receipt.malformed': USAGE,
  /**
   * Where the receipt is checked (a publication, a coordinator) publishes no usable receipt key, or
   * Ed25519 cannot be checked here.
   */
  'receipt.key_unavailable': PLAIN,
  /** The coordinator or the publication could not give what the check reads (transcript, key ranges). */
  'receipt.source_unavailable': PLAIN,
  'receipt.other_ceremony': PLAIN,
  'receipt.bad_signature': PLAIN,
  'receipt.not_in_transcript': PLAIN,
  /** A step receipt (join, refusal, removal) whose entry the published queue log lacks, or holds otherwise. */
  'receipt.not_in_queue_log': PLAIN,
  /** The final key (or, before finalisation, the head) does not descend from the receipt's contribution. */
  'receipt.not_in_key': PLAIN,
  /** The key's own contribution history does not hold together, or does not match the transcript. */
  'receipt.history_invalid': PLAIN,
  /**
   * Bytes of a key the check read by range are not the bytes the transcript's section hashes name:
   * the coordinator (or the publication) served the check another key than it recorded.
   */
  'receipt.served_bytes_mismatch': PLAIN,
  /** A record after the receipt's contribution has a proof of knowledge, or a δ step, that does not verify. */
  'receipt.proof_invalid': PLAIN,
  /** The key's δ in G2 is not its δ in G1 (e(δ1, g2) ≠ e(g1, δ2)). */
  'receipt.delta_mismatch': PLAIN,
  /**
   * The key's sections a contribution never changes (all but 2, 8, 9, 10), or α, β, γ of its header,
   * are not contribution 0's, as the transcript records them.
   */
  'receipt.sections_changed': PLAIN,
} as const satisfies Record<string, ErrorCodeTraits>;

export type ErrorCode = keyof typeof ERROR_CODES;

/** Every code, in the table's order (for tables keyed by code, and their tests). */
export const ALL_ERROR_CODES = Object.keys(ERROR_CODES) as readonly ErrorCode[];

const TRAITS: Readonly<Record<ErrorCode, ErrorCodeTraits>> = ERROR_CODES;

/** True for a code of the table; for codes read from outside (a queue's failure text, an old database row). */
export function isErrorCode(value: unknown): value is ErrorCode {
  return typeof value === 'string' && Object.hasOwn(ERROR_CODES, value);
}

/**
 * `value` if it is a code of the table, else `fallback`: a code that crossed a process or a
 * database (written by another version, or damaged) is checked, never cast.
 */
export function errorCodeOr(value: unknown, fallback: ErrorCode): ErrorCode {
  return isErrorCode(value) ? value : fallback;
}

/** See ErrorCodeTraits.refusesContribution. */
export function refusesContribution(code: ErrorCode): boolean {
  return TRAITS[code].refusesContribution === true;
}

/** See ErrorCodeTraits.usage. */
export function isUsageError(code: ErrorCode): boolean {
  return TRAITS[code].usage === true;
}

export class CoordinatorError extends Error {
  override readonly name = 'CoordinatorError';

  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly details?: Record<string, unknown>,
  ) {
    super(message);
  }

  toJSON(): { error: { code: ErrorCode; message: string } } {
    return { error: { code: this.code, message: this.message } };
  }
}

export function isCoordinatorError(error: unknown, code?: ErrorCode): error is CoordinatorError {
  return error instanceof CoordinatorError && (code === undefined || error.code === code);
}
