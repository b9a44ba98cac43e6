/**
 * Every code of the coordinator (core/errors.ts) in plain words: what happened, and what happens
 * next. Typed as a complete table so a new code cannot ship without its explanation. One table
 * for both contributor clients, the page (web/src/api/error-messages.ts) and the terminal
 * (`ceremony contribute --coordinator`), so both give the same reason for the same refusal; where
 * what to do differs (reload the page, or keep the command running), an entry says it for the
 * terminal in `nextInTerminal`.
 */
import type { ErrorCode } from './errors.ts';

export interface PlainWords {
  /** What happened, for someone who has never seen a zkey. */
  what: string;
  /** What happens next, or what to do (in the page's terms). */
  next: string;
}

export interface ErrorWords extends PlainWords {
  /** What happens next for the terminal client, where the page's words (the tab, reloading) do not fit. */
  nextInTerminal?: string;
}

const RETRY_TURN =
  'You are back in the queue for this circuit. When your turn comes ' +
  'again, this page contributes again with fresh randomness; there is ' +
  'nothing you need to do but keep the tab open.';
const RETRY_TURN_TERMINAL =
  'You are back in the queue for this circuit. When your turn comes ' +
  'again, this command contributes again with fresh randomness; there is ' +
  'nothing you need to do but keep it running.';
const RERUN = 'Run the command again; if it persists, tell the coordinator.';
const OPERATOR =
  'This is a problem on the coordinator’s side, not yours. The coordinator has been told; please try again later.';
const SIGN_IN_AGAIN = 'Sign in again.';
const LEGACY_NEXT =
  'Check it from your own checkout with `ceremony verify-receipt` (or `ceremony audit`) and ' +
  '--allow-legacy-transcript, which says what it could not prove.';

const REFUSED_FILE = (what: string): ErrorWords => ({
  what: `Your contribution was refused: ${what}`,
  next: RETRY_TURN,
  nextInTerminal: RETRY_TURN_TERMINAL,
});

export const ERROR_MESSAGES: Record<ErrorCode, ErrorWords> = {
  // The `ceremony` command's own codes: a page meets them only through a coordinator-side tool.
  'usage.invalid_arguments': {
    what: 'A command of the coordinator was called with invalid arguments.',
    next: OPERATOR,
  },
  'input.file_not_found': { what: 'A file the coordinator needs is missing.', next: OPERATOR },
  'input.not_json': { what: 'A file the coordinator read is not valid JSON.', next: OPERATOR },
  'input.invalid': { what: 'A file the coordinator read is not what it should be.', next: OPERATOR },

  'config.not_found': { what: 'The ceremony is not configured on this server.', next: OPERATOR },
  'config.invalid': { what: 'The ceremony’s configuration is invalid.', next: OPERATOR },
  'runtime.native_module_mismatch': {
    what: 'This installation’s native modules were built for another version of Node.',
    next: 'Run `npm rebuild` in the project folder with the Node that runs the command.',
  },
  'circuit.unknown': {
    what: 'This ceremony has no circuit of that name.',
    next: 'Reload the page: the list of circuits may have changed.',
    nextInTerminal: 'Check the circuit names (the ceremony lists them at /api/ceremony) and run the command again.',
  },
  'r1cs.malformed': { what: 'A circuit file on the server is damaged.', next: OPERATOR },
  'circuit.public_inputs_mismatch': { what: 'A circuit does not match the ceremony’s configuration.', next: OPERATOR },
  'ptau.malformed': { what: 'The powers-of-tau file on the server is damaged.', next: OPERATOR },
  'ptau.not_prepared': { what: 'The powers-of-tau file is not prepared for Phase 2.', next: OPERATOR },
  'ptau.too_small': { what: 'The powers-of-tau file is too small for a circuit.', next: OPERATOR },
  'ptau.insecure': { what: 'The powers-of-tau file is a development one.', next: OPERATOR },

  'ceremony.already_initialised': { what: 'The ceremony is already initialised.', next: 'Nothing to do.' },
  'ceremony.not_initialised': { what: 'The ceremony has not been set up yet.', next: OPERATOR },
  'ceremony.locked': { what: 'The ceremony is busy with another operation.', next: 'Wait a moment and try again.' },
  'ceremony.already_served': {
    what: 'Another coordinator already serves this ceremony.',
    next: 'Stop it first, or give this one a data folder of its own.',
  },
  'ceremony.outside_queue_log': {
    what:
      'A contribution made on the coordinator’s data folder, outside its queue, was refused: ' +
      'the audit would fail it.',
    next:
      'Contribute through the coordinator’s queue (`ceremony contribute --coordinator URL`), ' +
      'as every contributor does.',
  },
  'ceremony.finalised': {
    what: 'The ceremony is finalised; it takes no more contributions.',
    next: 'Thank you. See the public ceremony page for the final keys.',
  },
  'ceremony.not_closed': {
    what: 'The ceremony is still taking contributions, so it cannot be finalised yet.',
    next: 'Close the ceremony first, then finalise.',
  },
  'ceremony.invalid_phase_change': {
    what: 'The ceremony cannot move from its current phase to that one.',
    next: 'Reload the console to see the current phase.',
  },
  'transcript.corrupt': { what: 'The ceremony’s transcript on the server is damaged.', next: OPERATOR },
  'chain.file_missing': { what: 'A key of the chain is missing on the server.', next: OPERATOR },
  'chain.file_unreadable': { what: 'A key of the chain on the server cannot be read.', next: OPERATOR },
  'chain.file_hash_mismatch': {
    what: 'A key of the chain on the server does not match the transcript.',
    next: OPERATOR,
  },
  'audit.initial_key_mismatch': {
    what: 'A published first key is not the one the circuit and the powers of tau produce.',
    next: OPERATOR,
  },

  'zkey.malformed': REFUSED_FILE(
    'the file that arrived is not a well-formed key (it may have been damaged on the way).',
  ),
  'zkey.section_table_mismatch': REFUSED_FILE(
    'the file that arrived is not laid out as a contribution on the current key (its sections or their sizes differ).',
  ),
  'zkey.not_groth16': REFUSED_FILE('the file that arrived is not a Groth16 key.'),
  'delta.malformed': REFUSED_FILE('the part of the key that was sent does not fit on the current key.'),
  'delta.stale_head': REFUSED_FILE('it was built on an older key; someone else’s contribution came first.'),
  'contribution.wrong_circuit': REFUSED_FILE('it was made for a different circuit.'),
  'contribution.header_mismatch': REFUSED_FILE('its header does not match the circuit’s key.'),
  'contribution.stale': REFUSED_FILE('it was built on an older key; someone else’s contribution came first.'),
  'contribution.no_new_contribution': REFUSED_FILE('it adds no new contribution to the key.'),
  'contribution.multiple_new_contributions': REFUSED_FILE('it adds more than one contribution at once.'),
  'contribution.history_mismatch': REFUSED_FILE('it changes earlier contributions of the chain.'),
  'contribution.unexpected_type': REFUSED_FILE('it is a beacon, not a contribution.'),
  'contribution.delta_unchanged': REFUSED_FILE('it leaves the key’s secret part unchanged.'),
  'contribution.delta_mismatch': REFUSED_FILE('its published values do not match the key it produced.'),
  'contribution.invalid_proof_of_knowledge': REFUSED_FILE(
    'its proof that you know your secret does not check out (the file was probably damaged on the way).',
  ),
  'contribution.l_section_invalid': REFUSED_FILE(
    'part of the key (the L section) was not updated consistently (the file was probably damaged on the way).',
  ),
  'contribution.h_section_invalid': REFUSED_FILE(
    'part of the key (the H section) was not updated consistently (the file was probably damaged on the way).',
  ),
  'contribution.point_not_on_curve': REFUSED_FILE(
    'it contains values that are not valid curve points (the file was probably damaged on the way).',
  ),
  'contribution.invalid': REFUSED_FILE('it is not a valid next link of the chain.'),

  'finalise.bad_beacon': {
    what: 'The beacon must be a hexadecimal value (up to 255 bytes).',
    next: 'Correct the beacon and finalise again.',
  },
  'finalise.bad_iterations': {
    what: 'The iteration count must be an exponent from 10 to 63.',
    next: 'Correct it and finalise again.',
  },
  'finalise.beacon_mismatch': {
    what: 'The ceremony was already partly finalised with a different beacon.',
    next: 'Finalise with the beacon and iterations used before.',
  },
  'finalise.verification_failed': {
    what: 'A final key did not verify.',
    next: 'Do not publish; check the server logs and run `ceremony audit`.',
  },
  'ceremony.beacon_announced': {
    what: 'The beacon is announced, so the ceremony takes no more contributions.',
    next: 'Nothing to do: the ceremony is being finalised. Your earlier contributions stand.',
    nextInTerminal: 'Contributions are closed; finalise with the announced beacon.',
  },
  'beacon.block_too_soon': {
    what: 'The block named for the beacon is mined already, or too close to be unknown when the announcement is out.',
    next: 'Announce a block further ahead.',
  },
  'beacon.block_not_final': {
    what: 'The announced block is not mined yet, or not enough blocks are on top of it.',
    next: 'Wait for it, then finalise again.',
  },
  'beacon.wrong_chain': {
    what: 'The RPC endpoint given for the beacon serves another chain than the announcement names.',
    next: 'Give an endpoint of the announced chain.',
  },
  'beacon.rpc_unavailable': {
    what: 'The RPC endpoint given for the beacon did not answer.',
    next: 'Check the endpoint and try again.',
  },

  'request.invalid': {
    what: 'The coordinator refused the request as invalid.',
    next: 'Reload the page and try again.',
    nextInTerminal: RERUN,
  },
  'request.too_large': {
    what: 'The request was larger than the coordinator accepts.',
    next: 'Reload the page and try again.',
    nextInTerminal: RERUN,
  },
  'request.query_not_allowed': {
    what: 'A file of the ceremony was asked for with a query string (`?…`), which its address never has.',
    next: 'Reload the page and try again.',
    nextInTerminal: RERUN,
  },
  internal: { what: 'The coordinator ran into an unexpected problem.', next: OPERATOR },
  not_found: { what: 'That does not exist (yet).', next: 'Reload the page.', nextInTerminal: RERUN },
  'manifest.not_finalised': {
    what: 'The ceremony is not finalised yet, so there is no manifest.',
    next: 'It appears here once the coordinator finalises the ceremony.',
  },
  'auth.required': { what: 'You are not signed in (or your session expired).', next: SIGN_IN_AGAIN },
  'auth.below_minimum': {
    what: 'Your GitHub account does not meet this ceremony’s minimums (followers, repositories or age).',
    next: 'You can sign in anonymously with a Semaphore identity if the coordinator added you to the group.',
  },
  'auth.github_failed': { what: 'GitHub sign-in did not complete.', next: 'Try again in a moment.' },
  'auth.invalid_proof': {
    what: 'Your membership proof did not verify.',
    next: 'Check that you pasted the right identity and try again.',
    nextInTerminal: 'Check that the identity file (or variable) holds the right exported identity and try again.',
  },
  'auth.challenge_unknown': {
    what: 'The sign-in challenge expired or was already used.',
    next: 'Try again: a fresh challenge is fetched each time.',
  },
  'auth.wrong_scope': { what: 'The proof was made for another ceremony.', next: 'Try again.' },
  'auth.unknown_root': {
    what: 'Your identity is not in this ceremony’s group (or the group changed).',
    next: 'Ask the coordinator to add your identity commitment, then try again.',
  },
  'auth.root_expired': {
    what: 'Your proof was made for an earlier version of the group, which is no longer accepted.',
    next: 'Sign in again: a new proof is made against the current group.',
  },
  'rate.limited': {
    what: 'Too many attempts in a short time.',
    next: 'Wait a moment (the answer says how long) and try again.',
  },
  'rate.ceremony_reads': {
    what: 'The ceremony was read too often from this address.',
    next: 'Wait a moment (the answer says how long); pages open on it elsewhere on your network count too.',
  },
  'rate.upload_requests': {
    what: 'Your upload sent too many requests in a short time.',
    next: 'Wait a moment (the answer says how long); the upload resumes from where it stopped.',
  },
  'rate.contributor_requests': {
    what: 'Your account asked the coordinator for news too often.',
    next:
      'Nothing to do: the page asks again after a pause (the answer says how long); ' +
      'close extra tabs if you have several open.',
    nextInTerminal: 'Nothing to do: the command asks again after a pause; stop any other copy of it you left running.',
  },
  'rate.receipt_reads': {
    what: 'Your receipts were asked for too often.',
    next: 'Wait a moment (the answer says how long) and try again.',
  },
  'download.too_many_in_progress': {
    what: 'Too many downloads from the coordinator are in progress from your network (or for your turn) at once.',
    next: 'Wait for one to finish (the answer says how long to wait) and try again.',
  },
  'download.server_busy': {
    what: 'The coordinator is serving as many downloads as it can at once.',
    next: 'Try again in a moment (the answer says when), or download from the ceremony’s mirror.',
  },
  'auth.too_many_in_progress': {
    what: 'Too many sign-ins were started from your network and not finished.',
    next: 'Finish one, or wait a few minutes (the answer says how long) and try again.',
  },
  'auth.proof_checks_busy': {
    what: 'The coordinator is checking as many membership proofs as it can at once.',
    next: 'Sign in again in a moment (the answer says when).',
  },
  'lobby.not_queued': { what: 'That contributor is not waiting in any queue.', next: 'Refresh the queue list.' },
  'lobby.too_many_joins': {
    what: 'You joined the queue too many times in a short time.',
    next: 'Wait a moment (the answer says how long) and join again; your place, if you have one, is kept.',
  },
  'presence.too_many_streams': {
    what: 'You already have this ceremony open in several pages or terminals.',
    next: 'Close the ones you do not need; the others keep your place.',
  },
  'presence.streams_full': {
    what: 'The coordinator holds as many open connections as it takes.',
    next: 'Nothing to do: your page keeps your place by asking for news instead.',
  },
  'auth.not_coordinator': {
    what: 'This account is not a coordinator of the ceremony.',
    next: 'Sign in with a coordinator account or token.',
  },
  'auth.csrf': {
    what: 'The page’s security token was missing or stale.',
    next: 'Reload the page and try again.',
    nextInTerminal: RERUN,
  },
  'auth.demo_disabled': { what: 'Test-network sign-in is off on this server.', next: 'Use another sign-in method.' },
  'auth.device_pending': {
    what: 'GitHub sign-in is waiting for you to enter the code at GitHub and authorize the ceremony.',
    next: 'Enter the code at the address shown; the sign-in completes by itself.',
  },
  'auth.device_slow_down': {
    what: 'GitHub sign-in was asked for its answer too often.',
    next: 'Nothing to do: it keeps asking, a little less often.',
  },
  'auth.device_expired': {
    what: 'The GitHub sign-in code expired (or was already used) before it was authorized.',
    next: 'Sign in again to get a new code, and enter it at GitHub within its time.',
  },
  'auth.device_denied': {
    what: 'The GitHub sign-in was refused at GitHub (the authorization was cancelled).',
    next: 'Sign in again and authorize the ceremony at GitHub if you want to contribute with that account.',
  },
  'ceremony.not_open': {
    what: 'The ceremony is not open for contributions right now.',
    next: 'Your place is kept while it is paused; come back when the coordinator opens it.',
  },
  'lobby.already_contributed': {
    what: 'You have already contributed to this circuit.',
    next: 'Nothing to do: your contribution counts.',
  },
  'lobby.not_your_turn': {
    what: 'It is not your turn on this circuit (your turn may have ended).',
    next: 'You stay in the queue; this page contributes when your turn comes.',
    nextInTerminal: 'You stay in the queue; this command contributes when your turn comes.',
  },
  'upload.too_large': {
    what: 'The file is larger than a valid contribution can be.',
    next: RETRY_TURN,
    nextInTerminal: RETRY_TURN_TERMINAL,
  },
  'upload.too_small': {
    what: 'The file is smaller than a valid contribution can be.',
    next: RETRY_TURN,
    nextInTerminal: RETRY_TURN_TERMINAL,
  },
  'upload.length_required': {
    what: 'The upload did not say its size in advance.',
    next: 'Reload the page and try again.',
    nextInTerminal: RERUN,
  },
  'upload.submitting': {
    what: 'Your previous upload for this circuit is being handed in right now.',
    next: 'Wait for its verdict; this page shows it.',
    nextInTerminal: 'Wait for its verdict; this command shows it.',
  },
  'upload.complete': {
    what: 'Your upload for this circuit already has all its bytes and is being handed in.',
    next: 'Wait for its verdict; this page shows it.',
    nextInTerminal: 'Wait for its verdict; this command shows it.',
  },
  'upload.disk_full': { what: 'The coordinator is short of disk space and takes no uploads for now.', next: OPERATOR },
  'upload.failed': { what: 'The coordinator could not store your upload.', next: OPERATOR },
  'upload.offset_conflict': {
    what: 'Part of your upload was sent twice or skipped.',
    next: 'Resume the upload; it continues from the coordinator’s copy.',
  },
  'upload.not_found': {
    what: 'The upload is no longer on the coordinator (replaced, expired or already handed in).',
    next: 'Start the upload again if your turn is still open.',
  },
  'upload.protocol_error': {
    what: 'The upload request was not one the coordinator takes.',
    next: RERUN,
  },
  'contribution.not_next': {
    what: 'Someone else’s contribution was added first, so yours no longer fits the chain.',
    next: RETRY_TURN,
    nextInTerminal: RETRY_TURN_TERMINAL,
  },
  'verification.unavailable': {
    what: 'The coordinator could not verify your contribution right now.',
    next: 'It is checked again automatically; if it is refused you get another turn.',
  },
  'publish.out_exists': {
    what: 'A publication of the ceremony was refused: its destination already exists.',
    next: OPERATOR,
  },
  'backup.out_exists': {
    what: 'A backup of the ceremony was refused: its destination already exists.',
    next: 'Back up into a new folder (for instance one named after the date), never over an earlier backup.',
  },
  'backup.not_a_backup': {
    what: 'The earlier backup to link unchanged files from is not a backup of this ceremony.',
    next: 'Name a folder an earlier `ceremony backup` of this ceremony wrote, or leave --link-dest out.',
  },
  'fetch.dir_not_empty': {
    what: 'A copy of the ceremony was refused: the folder to fetch into already holds files.',
    next: 'Fetch into a new, empty folder, or add --resume to complete an interrupted fetch.',
  },
  'fetch.http_error': {
    what: 'A file could not be fetched from the coordinator (no answer, an HTTP error, or a download cut off).',
    next: 'Run the command again later with --resume; the message names the file and the answer.',
  },
  'fetch.bad_answer': {
    what: 'The coordinator answered something its API never answers.',
    next: 'Check the address you gave; if it is the coordinator’s, tell its operators (and the other auditors).',
  },
  'fetch.other_ceremony': {
    what: 'The coordinator serves another ceremony than the ceremony.json you fetch with.',
    next: 'Check the address, and that your checkout holds this ceremony’s ceremony.json.',
  },
  'metrics.forbidden': {
    what: 'The coordinator’s monitoring figures are only for its operators.',
    next: 'Nothing to do: contributing does not need them.',
  },
  'lifecycle.illegal_transition': {
    what: 'The coordinator hit an internal inconsistency while recording a contribution.',
    next: OPERATOR,
  },

  'audit.ptau_unpinned': {
    what: 'The audit does not know the powers-of-tau file: it is not a known public one and no hash was given for it.',
    next: 'Check where the file comes from, then run the audit again with --ptau-hash and its BLAKE2b-512.',
  },
  'audit.r1cs_unpinned': {
    what: 'The audit cannot vouch for a circuit file: neither your ceremony.json nor --r1cs-hash pins its hash.',
    next:
      'Compile the circuit from its sources yourself, then pin it: --r1cs-hash CIRCUIT=HASH, or r1csHash in your ' +
      'ceremony.json.',
  },
  'ptau.hash_mismatch': {
    what: 'The powers-of-tau file is not the one the ceremony’s configuration pins.',
    next: 'Use the pinned file, or check where this one comes from.',
  },
  'config.publication_mismatch': {
    what: 'The ceremony you check is configured otherwise than your own copy of its ceremony.json says.',
    next: 'Check that your checkout is this ceremony’s; if it is, report the difference the message names publicly.',
  },
  'transcript.legacy_format': {
    what:
      'The ceremony’s transcript is of the old format 1, which records whole-file hashes only, so this check ' +
      'cannot prove everything it names.',
    next: LEGACY_NEXT,
  },
  'transcript.mixed_format': {
    what: 'The ceremony’s transcript mixes old format-1 entries with format-2 ones, so some checks cannot run.',
    next: LEGACY_NEXT,
  },
  'transcript.identifier_mismatch': {
    what:
      'The ceremony’s identifier is not the one you compared: this is another transcript than the one you were ' +
      'given.',
    next: 'Compare identifiers with the other readers again; if yours came from them, report the difference publicly.',
  },
  'audit.ptau_hash_mismatch': {
    what: 'The powers-of-tau file is not the one the auditor pinned.',
    next: 'Get the pinned file (or pin the right hash) and run the audit again.',
  },
  'audit.ptau_inconsistent': {
    what: 'The powers-of-tau file’s prepared sections do not follow from its powers of tau.',
    next: 'Do not use this ceremony’s keys; the file may have been forged.',
  },
  'queue_log.corrupt': {
    what: 'The public queue log is damaged: an entry is malformed or its hash chain is broken.',
    next: 'Report it publicly: the log was changed after the fact.',
  },
  'audit.turn_out_of_order': {
    what: 'The queue log shows a turn given to someone other than the one first in line.',
    next: 'Report it publicly with the entries the audit names.',
  },
  'audit.queue_rule_broken': {
    what: 'The queue log shows a step the lobby’s rules do not allow.',
    next: 'Report it publicly with the entries the audit names.',
  },
  'audit.queue_log_mismatch': {
    what: 'The queue log and the transcript disagree about a contribution.',
    next: 'Report it publicly with the entries the audit names.',
  },
  'audit.queue_log_missing': {
    what: 'The publication has no queue log: the order of turns cannot be checked.',
    next:
      'Ask the coordinator for transcript/queue-log.jsonl; audit with --no-queue-log only for a ceremony made ' +
      'without the coordinator’s lobby.',
  },
  'audit.too_few_contributions': {
    what: 'A circuit was finalised with fewer contributions than the ceremony requires.',
    next: 'Do not use that circuit’s final key; its secret may be known.',
  },
  'audit.beacon_too_costly': {
    what: 'A final beacon is hashed more times than the audit was allowed to spend on it.',
    next: 'If that is the announced beacon, audit again with a higher --max-beacon-iterations.',
  },
  'audit.beacon_not_announced': {
    what: 'A final key applies a beacon that is not the hash of the block the transcript announced.',
    next: 'Do not trust the final keys: the coordinator could have chosen the beacon.',
  },
  'audit.not_finalised': {
    what: 'The ceremony is not finished: some circuit has no final key, or the transcript does not close it.',
    next: 'Audit again once it is finalised, or with --in-progress to check a running ceremony.',
  },
  'audit.verifier_files_uncommitted': {
    what: 'The transcript does not commit the ceremony’s compiler record and verifier sources.',
    next: 'Check each deployment against the final keys with your own compiler settings (--compiler-settings).',
  },
  'audit.verifier_files_mismatch': {
    what:
      'The published compiler record or a verifier source is not the one the transcript commits ' +
      'or the final key gives.',
    next: 'Do not deploy from the published sources; render the verifiers from the final keys yourself.',
  },
  'transcript.section_hash_mismatch': {
    what: 'The public transcript records other contents for part of a key than the key file has.',
    next: 'Do not use this ceremony’s keys; report it publicly.',
  },
  'vkey.delta_equals_gamma': {
    what: 'A verification key never went through Phase 2 (its δ equals its γ): anyone can forge its proofs.',
    next: 'Do not deploy or use that key.',
  },
  'deployment.constant_mismatch': {
    what: 'A deployed verifier contract does not carry the whole verification key of the ceremony’s final key.',
    next: 'Do not trust that contract: it may accept forged proofs.',
  },
  'deployment.bytecode_mismatch': {
    what: 'A deployed verifier contract is not the ceremony’s verifier as compiled with the recorded compiler.',
    next: 'Do not trust that contract until its code is explained.',
  },
  'deployment.not_recompiled': {
    what:
      'A deployed verifier contract could not be compared with the ceremony’s verifier recompiled ' +
      'from its final key.',
    next: 'Give the settings the contract was compiled with (--compiler-settings), or do not trust that contract.',
  },
  'deployment.verifier_name_mismatch': {
    what: 'The ceremony folder pairs a verifier name with another circuit’s final key than its transcript does.',
    next: 'Check against the ceremony’s own files, with your own ceremony.json; do not trust those contracts.',
  },
  'compiler.record_invalid': {
    what: 'The ceremony’s compiler record is not one, or asks for settings outside the documented set.',
    next: 'Compare the deployed code with your own settings (--compiler-settings), and ask the coordinator why.',
  },
  'deployment.networks_differ': {
    what: 'A verifier contract on the second network has other code than on the first.',
    next: 'Check the second network’s contract on its own before trusting it.',
  },
  'deployment.manifest_mismatch': {
    what: 'The delta manifest does not agree with the ceremony’s final keys.',
    next: 'Use the manifest the ceremony published, and check it with `ceremony audit`.',
  },
  'deployment.no_contract': {
    what: 'There is no contract at a verifier’s address.',
    next: 'Check the address in the verifiers file and the network.',
  },
  'deployment.rpc_unavailable': {
    what: 'The network’s JSON-RPC endpoint could not be reached or did not give a contract’s code.',
    next: RERUN,
  },
  'deployment.no_verifier': {
    what: 'The verifiers file names no verifier contract of the receipt’s circuit.',
    next: 'Add the circuit’s verifier (e.g. VerifierTransact21) and its address to the verifiers file.',
  },
  'deployment.not_finalised': {
    what: 'The receipt’s circuit is not finalised yet, so no deployed verifier can carry its final key.',
    next: 'Check the deployment once the ceremony is finalised.',
  },
  'deployment.wrong_chain': {
    what: 'The JSON-RPC endpoint answers for another chain than the one the check was asked to read.',
    next: 'Give the endpoint of the network you mean to check, or the chain id it has.',
  },
  'deployment.test_ceremony_on_mainnet': {
    what: 'A test-network ceremony, whose secret is public, was checked against verifiers on a mainnet.',
    next: 'Check mainnet verifiers against the real ceremony; a test ceremony’s keys guard nothing.',
  },
  'contribution.identity_pattern_changed': REFUSED_FILE(
    'some of its points are empty (the point at infinity) where the ' +
      'previous key’s are not, or the other way round; a real contribution ' +
      'never does that.',
  ),
  'finalise.too_few_contributions': {
    what: 'A circuit has fewer contributions than the ceremony requires, so it cannot be finalised yet.',
    next: 'Open the ceremony until every circuit has enough contributions.',
  },
  'receipt.malformed': {
    what: 'That is not a receipt: paste the receipts file this site gave you (or one receipt from it).',
    next: 'Check that you pasted the whole file, then try again.',
  },
  'receipt.key_unavailable': {
    what:
      'The receipt’s signature cannot be checked here: the coordinator’s receipt key is missing, or this browser ' +
      'cannot check Ed25519 signatures.',
    next: 'Use a current browser, or check from a terminal with `ceremony verify-receipt`.',
  },
  'receipt.source_unavailable': {
    what: 'Part of what the check reads (the transcript or a part of a key) could not be fetched.',
    next:
      'Try again in a moment; if it persists, check from a terminal with `ceremony verify-receipt` on a published ' +
      'copy.',
  },
  'receipt.other_ceremony': {
    what: 'This receipt belongs to another ceremony.',
    next: 'Check it on the page of the ceremony it names.',
  },
  'receipt.bad_signature': {
    what:
      'The receipt’s signature does not match the coordinator’s receipt key: it was changed, or this coordinator ' +
      'did not sign it.',
    next:
      'Use the file exactly as you downloaded it. If it is untouched, report this publicly: the coordinator cannot ' +
      'vouch for its own receipt.',
  },
  'receipt.not_in_transcript': {
    what: 'The public transcript does not record this contribution at this position with these hashes.',
    next:
      'Report it publicly with your receipt: the coordinator signed a ' +
      'contribution its public record does not hold.',
  },
  'receipt.not_in_key': {
    what: 'The key does not descend from this contribution: its own history of contributions does not list it.',
    next: 'Report it publicly with your receipt: the published key was not built on your contribution.',
  },
  'receipt.not_in_queue_log': {
    what: 'The published queue log does not record the step this receipt is for.',
    next: 'Report it publicly with the receipt: the coordinator signed a step it did not publish.',
  },
  'receipt.history_invalid': {
    what: 'The key’s own history of contributions does not hold together, or differs from the public transcript.',
    next: 'Report it publicly: the key was changed after the fact. Run the full audit for details.',
  },
  'receipt.served_bytes_mismatch': {
    what: 'The parts of the key the coordinator sent this check are not the ones its public transcript records.',
    next:
      'Report it publicly with your receipt: the coordinator serves the check another key than it publishes. ' +
      'Check a published copy with `ceremony verify-receipt`.',
  },
  'receipt.proof_invalid': {
    what:
      'A contribution recorded after yours does not prove knowledge of its secret, or does not build on the one ' +
      'before it: the final key may not carry your contribution’s secret.',
    next: 'Report it publicly with your receipt, and do not rely on that circuit’s final key.',
  },
  'receipt.delta_mismatch': {
    what: 'The key’s two copies of its secret-derived δ do not match: proofs made with it would not verify.',
    next: 'Report it publicly, and do not rely on that circuit’s final key.',
  },
  'receipt.sections_changed': {
    what:
      'Parts of the final key that no contribution changes (the circuit’s public inputs, α, β, γ, …) differ from ' +
      'the first key’s: the key may accept forged proofs.',
    next: 'Report it publicly, and do not rely on that circuit’s final key.',
  },
  'r1cs.hash_mismatch': { what: 'A circuit file is not the one the ceremony’s configuration pins.', next: OPERATOR },
  'audit.b2_outside_subgroup': {
    what:
      'A published first key has points outside the group the proofs use, ' +
      'which would leak parts of every prover’s secrets.',
    next: OPERATOR,
  },
};

/**
 * The terminal client's words for any code, including ones this version does not know (a newer
 * coordinator's): `what` as the page says it, `next` in terms of the command.
 */
export function terminalWords(code: string, serverMessage?: string | null): PlainWords {
  const known = (ERROR_MESSAGES as Record<string, ErrorWords | undefined>)[code];
  if (known) return { what: known.what, next: known.nextInTerminal ?? known.next };
  if (code === 'network')
    return {
      what: 'The coordinator could not be reached.',
      next:
        'Check your connection and the coordinator’s address, then run the command again: it picks up where ' +
        'the queue stands.',
    };
  return {
    what: serverMessage ? `The coordinator answered: ${serverMessage}` : `Something went wrong (${code}).`,
    next: RERUN,
  };
}
