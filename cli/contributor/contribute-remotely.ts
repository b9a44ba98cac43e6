/**
 * `ceremony contribute --coordinator URL …`: the contributor's remote form, from options to exit
 * code. Signs in (GitHub device flow, a Semaphore identity, or the demo sign-in of a test network),
 * runs the turns (contributor-run.ts) through files on disk (file-turn.ts: deltas where the
 * coordinator takes them, else whole keys), saves the signed receipts, and handles interruptions:
 *
 *  - Ctrl-C leaves the queue cleanly (POST /api/me/leave); during a turn it asks first (on a
 *    terminal; elsewhere the signal is the answer), and a second Ctrl-C is a yes. SIGTERM leaves
 *    without asking. The turn's unfinished upload is terminated, its files deleted.
 *  - A crash (or SIGKILL) leaves the lobby as it was: a rerun with the same sign-in joins again
 *    (join is idempotent: no second entry) and takes a turn still held from scratch; the upload it
 *    creates replaces the one the crash left half-done.
 *
 * Progress goes to stderr (a live line per circuit on a terminal, plain lines in a log), results to
 * stdout (one `CIRCUIT #INDEX contribution hash HASH` line per accepted circuit). Exit codes: 0
 * every circuit accepted, 1 a refusal or an error (and an interruption), 2 a usage error.
 */
import { tmpdir } from 'node:os';
import { terminalWords } from '../../core/error-messages.ts';
import { contributionEntropy, digestTypedEntropy } from '../../core/crypto/contribution-entropy.ts';
import { CoordinatorError } from '../../core/errors.ts';
import { makeOwnedWorkFolder, removeDeadOwnersFolders } from '../../core/fs/owned-work-folders.ts';
import type { CeremonyView } from '../../core/coordinator-api/api-types.ts';
import { createProgressRenderer } from '../progress/progress-renderer.ts';
import { RESTART_RIDE_OUT_MS } from '../../client/restart-retry.ts';
import { ApiError, type RestartNotices, type SignedIn } from '../../client/api-client.ts';
import { CoordinatorClient } from './coordinator-client.ts';
import { ContributorRun } from './contributor-run.ts';
import { type RunUi } from './contributor-run-options.ts';
import { RunFailure } from '../../client/contributor-driver-parts.ts';
import { FileTurn } from './file-turn.ts';
import { DELTA_FORMAT } from '../../core/delta/delta-format.ts';
import { signInWithGithubDevice } from './github-device-sign-in.ts';
import { lostReceipts, saveReceipts } from './save-receipts.ts';
import { readSemaphoreIdentity, signInWithSemaphore, type IdentitySource } from './semaphore-sign-in.ts';
import { askYesNo, InputInterrupted, interactive, readHiddenLine } from './terminal-input.ts';
import type { TurnProtocol } from './turn-protocol.ts';

export type SignInMethod =
  { kind: 'github' } | { kind: 'semaphore'; source: IdentitySource } | { kind: 'demo'; name: string };

export interface RemoteContributeOptions {
  coordinator: string;
  signIn: SignInMethod;
  /** Circuits named on the command line (empty: every circuit, in ceremony order). */
  circuits: readonly string[];
  receipts?: string;
  entropyPrompt: boolean;
  maxAttempts: number;
  /** Kernel threads (default every core). */
  workers?: number;
  /** Move the whole key down and up even where the coordinator takes contribution deltas. */
  wholeKey?: boolean;
}

const EXIT_OK = 0;
const EXIT_FAILED = 1;

/** The protocol a turn runs on: deltas where the coordinator takes them (and --whole-key was not asked). */
function turnProtocol(
  client: CoordinatorClient,
  workDir: string,
  options: RemoteContributeOptions,
  ceremony: CeremonyView,
): TurnProtocol {
  const delta = !options.wholeKey && (ceremony.contributionFormats ?? []).includes(DELTA_FORMAT);
  return new FileTurn({ client, workDir, workers: options.workers, transfer: delta ? 'delta' : 'whole-key' });
}

function coordinatorUrl(raw: string): URL {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new CoordinatorError(
      'usage.invalid_arguments',
      `--coordinator needs the coordinator's address (http:// or https://), not "${raw}"`,
    );
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw new CoordinatorError(
      'usage.invalid_arguments',
      `--coordinator must be an http:// or https:// address, not ${url.protocol}`,
    );
  return url;
}

function isLoopback(hostname: string): boolean {
  return hostname === 'localhost' || hostname === '[::1]' || /^127\.\d+\.\d+\.\d+$/.test(hostname);
}

const WORK_DIR_PREFIX = 'ceremony-contribute-';

/** The circuits to contribute to, in ceremony order; a name the ceremony does not have is a usage error. */
function chosenCircuits(ceremony: CeremonyView, named: readonly string[]): string[] {
  const names = ceremony.circuits.map((c) => c.name);
  const unknown = named.filter((name) => !names.includes(name));
  if (unknown.length > 0) {
    throw new CoordinatorError(
      'usage.invalid_arguments',
      `this ceremony has no circuit ${unknown.map((n) => `"${n}"`).join(', ')}; it has ${names.join(', ')}`,
    );
  }
  return named.length === 0 ? names : names.filter((name) => named.includes(name));
}

/** `error [code]: message` and, for a code with plain words, what it means and what happens next. */
function reportFailure(note: (line: string) => void, code: string, message: string): void {
  note(`error [${code}]: ${message}`);
  const words = terminalWords(code, message);
  if (!words.what.startsWith('The coordinator answered:')) note(`  ${words.what} ${words.next}`);
}

/** The digest of the extra entropy the contributor types (--entropy-prompt); 'interrupted' on Ctrl-C. */
async function typedEntropy(): Promise<Buffer | 'interrupted'> {
  try {
    const typed = await readHiddenLine(
      'Type some random text for extra entropy (it is not shown, stored or sent), then Enter: ',
    );
    return digestTypedEntropy(typed);
  } catch (error) {
    if (error instanceof InputInterrupted) return 'interrupted';
    throw error;
  }
}

/** The line that says what leaving took the contributor out of (POST /api/me/leave's answer). */
function leftNote(left: { left: string; circuit?: string }, why: string): string {
  const { circuit } = left;
  if (left.left === 'turn') return `left the queue (${why}): your turn on ${circuit} goes to the next in line`;
  if (left.left === 'after_verdict')
    return (
      `left the queue (${why}): your contribution to ${circuit} is still ` +
      `being verified; its verdict stands, and nothing is queued after it`
    );
  if (left.left === 'waiting') return `left the queue (${why}) for ${circuit}`;
  return `stopped (${why}); you were in no queue`;
}

/** The line that says who signed in, to which ceremony, for which circuits. */
function signedInNote(ceremony: CeremonyView, who: SignedIn['principal'], circuits: string[]): string {
  return (
    `signed in to ${ceremony.title ?? ceremony.id} as ${who.displayName} ` +
    `(${who.kind}${who.kind === 'semaphore' ? ', anonymous' : ''}); ` +
    `contributing to ${circuits.length === ceremony.circuits.length ? 'every circuit' : circuits.join(', ')}`
  );
}

/** Saves the contributor's signed receipts to `file`, and says whether each signature checked. */
async function saveReceiptsFile(
  client: CoordinatorClient,
  receiptPublicKey: string,
  file: string,
  note: (line: string) => void,
): Promise<boolean> {
  const saved = await saveReceipts(client, receiptPublicKey, file);
  const checked =
    saved.badSignatures === 0
      ? "each signature checked against the coordinator's published key"
      : `${saved.badSignatures} signature(s) do NOT verify against the coordinator's published key`;
  const steps = saved.steps === 0 ? '' : `, with ${saved.steps} of queue steps (joins, refusals, removals)`;
  note(`saved ${saved.count} signed receipt${saved.count === 1 ? '' : 's'} to ${file} (${checked})${steps}`);
  return saved.badSignatures === 0;
}

/**
 * What the contributor is told while requests ride out a coordinator restart: one line when the
 * coordinator stops answering (however many requests are waiting), one when it answers again.
 */
function restartNotices(note: (line: string) => void): RestartNotices {
  let troubled = false;
  return {
    onRetry: (retry) => {
      if (troubled) return;
      troubled = true;
      note(
        `the coordinator does not answer (${retry.reason}); this command keeps trying for up to ` +
          `${Math.round(RESTART_RIDE_OUT_MS / 60_000)} minutes`,
      );
    },
    onRecovered: (ms) => {
      if (!troubled) return;
      troubled = false;
      note(`the coordinator answers again (after ${Math.max(1, Math.round(ms / 1000))} s)`);
    },
  };
}

/**
 * Says which receipts of an earlier run's FILE the coordinator's transcript no longer records (their
 * contributions are lost: the coordinator went back to an earlier state), and where that FILE was
 * kept before this run replaces it; the run then contributes to those circuits again.
 */
async function noteLostReceipts(
  client: CoordinatorClient,
  ceremonyId: string,
  file: string,
  note: (line: string) => void,
): Promise<void> {
  const { lost, keptAs } = await lostReceipts(client, ceremonyId, file);
  for (const body of lost) {
    note(
      `${body.circuit} #${body.index}: your contribution accepted at ${body.acceptedAt} (hash ` +
        `${body.contributionHash.slice(0, 16)}…) is not in the coordinator's transcript any more: the coordinator ` +
        'went back to an earlier state (a backup restored), so it is lost; you may contribute to ' +
        `${body.circuit} again`,
    );
  }
  if (keptAs) note(`your earlier receipts, which show those acceptances, were kept as ${keptAs}`);
}

/** Signs in the way the command line chose. */
async function signInAs(
  client: CoordinatorClient,
  method: SignInMethod,
  how: {
    /** The Semaphore identity, read before anything went over the network. */
    identity: string | undefined;
    note: (line: string) => void;
    signal: AbortSignal;
    /** snarkjs and the curve loading for the turns. */
    preparing: Promise<void> | undefined;
  },
): Promise<SignedIn> {
  switch (method.kind) {
    case 'demo':
      return client.signInDemo(method.name);
    case 'github':
      return signInWithGithubDevice(client, how.note, how.signal);
    case 'semaphore':
      if (how.identity === undefined) throw new Error('the Semaphore identity was not read');
      // The prover (snarkjs) takes the curve cached on globalThis; building it at the same time
      // as `preparing` would make two, and the uncached one's threads keep the process alive.
      await how.preparing;
      return signInWithSemaphore(client, how.identity, how.note);
  }
}

/** What the interrupt handlers and the run share: the turn under way, and where leaving stands. */
interface RemoteState {
  readonly client: CoordinatorClient;
  readonly ui: RunUi;
  readonly options: RemoteContributeOptions;
  readonly leaveController: AbortController;
  run?: ContributorRun;
  ceremony?: CeremonyView;
  signedIn: boolean;
  leaving: boolean;
  asking: boolean;
  /** A question is on screen: live lines wait. */
  holdLive: boolean;
  closeRenderer(): void;
}

function writeReceipts(state: RemoteState, file: string): Promise<boolean> {
  if (!state.ceremony) return Promise.resolve(false);
  return saveReceiptsFile(state.client, state.ceremony.receiptPublicKey, file, state.ui.note);
}

/** Tells the coordinator the contributor left, saves the receipts so far, and ends the process. */
async function finishLeaving(state: RemoteState, why: string): Promise<never> {
  state.leaving = true;
  state.leaveController.abort(new DOMException(why, 'AbortError'));
  if (state.signedIn) {
    try {
      const answer = await state.client.request<{ left: { left: string; circuit?: string } }>('POST', '/api/me/leave');
      state.ui.note(leftNote(answer.left, why));
    } catch (error) {
      state.ui.note(
        `could not tell the coordinator you left (${(error as Error).message}); your place expires with its turn`,
      );
    }
    if (state.options.receipts) await writeReceipts(state, state.options.receipts).catch(() => {});
  }
  state.closeRenderer();
  process.exit(EXIT_FAILED);
}

/** Ctrl-C and SIGTERM: leave the queue, asking first during a turn on a terminal. Returns the remover. */
function listenForInterrupts(state: RemoteState): () => void {
  const onInterrupt = async (signal: NodeJS.Signals): Promise<void> => {
    // A second Ctrl-C while leaving: stop now.
    if (state.leaving) process.exit(EXIT_FAILED);
    if (state.asking) {
      // Ctrl-C at the question arrives as a key (the answer); a SIGTERM does not wait for one.
      if (signal !== 'SIGTERM') return;
      if (process.stdin.isTTY) process.stdin.setRawMode(false);
      process.stderr.write('\n');
    }
    const activity = state.run?.activity;
    if (signal === 'SIGINT' && !state.asking && activity?.stage === 'turn' && interactive()) {
      state.asking = true;
      state.holdLive = true;
      const yes = await askYesNo(
        `Leave the queue and give up your turn on ${activity.circuit}? The work on it is lost.`,
      );
      state.asking = false;
      state.holdLive = false;
      if (!yes) {
        state.ui.note('carrying on with the turn');
        return;
      }
    }
    await finishLeaving(state, signal === 'SIGINT' ? 'interrupted' : 'stopped');
  };
  const onSigint = (): void => void onInterrupt('SIGINT');
  const onSigterm = (): void => void onInterrupt('SIGTERM');
  process.on('SIGINT', onSigint);
  process.on('SIGTERM', onSigterm);
  return () => {
    process.off('SIGINT', onSigint);
    process.off('SIGTERM', onSigterm);
  };
}

/** Signs in, runs every chosen circuit's turn and saves the receipts; the exit code. */
async function signInAndContribute(
  state: RemoteState,
  how: { workDir: string; identity: string | undefined; typedDigest: Buffer | undefined },
  started: (preparing: Promise<void> | undefined) => void,
): Promise<number> {
  const { client, ui, options } = state;
  const ceremony = await client.request<CeremonyView>('GET', '/api/ceremony');
  state.ceremony = ceremony;
  const circuits = chosenCircuits(ceremony, options.circuits);
  const protocol = turnProtocol(client, how.workDir, options, ceremony);
  // snarkjs and the curve load while we sign in and wait (a second or so the first turn does not pay).
  const preparing = protocol.prepare?.().catch(() => {});
  started(preparing);
  const signIn = (): Promise<SignedIn> =>
    signInAs(client, options.signIn, {
      identity: how.identity,
      note: ui.note,
      signal: state.leaveController.signal,
      preparing,
    });
  const session = await signIn();
  state.signedIn = true;
  const who = session.principal;
  ui.note(signedInNote(ceremony, who, circuits));
  if (options.receipts) await noteLostReceipts(client, ceremony.id, options.receipts, ui.note);

  state.run = new ContributorRun({
    client,
    protocol,
    ceremony,
    circuits,
    everyCircuit: options.circuits.length === 0,
    name: who.displayName,
    entropy: () => contributionEntropy(how.typedDigest),
    maxAttempts: options.maxAttempts,
    ui,
    output: (line) => process.stdout.write(`${line}\n`),
    signInAgain: async () => void (await signIn()),
    signal: state.leaveController.signal,
    ready: preparing,
  });
  await state.run.run();
  let code = EXIT_OK;
  if (options.receipts) {
    const saved = await writeReceipts(state, options.receipts).catch((error: unknown) => {
      if (!(error instanceof ApiError)) throw error;
      ui.note(
        `every circuit is accepted, but the receipts could not be fetched (${error.message}); run the same ` +
          'command again later to save them (it finds every circuit accepted and only saves them)',
      );
      return false;
    });
    if (!saved) code = EXIT_FAILED;
  }
  ui.note(`done: ${circuits.length} circuit${circuits.length === 1 ? '' : 's'} accepted`);
  return code;
}

/** A failed run: says why, leaves where the failure asks it, and keeps the receipts; the exit code. */
async function reportRunError(state: RemoteState, error: unknown): Promise<number> {
  // Leaving: finishLeaving tells the coordinator and exits the process; nothing here may race it.
  if (state.leaving) await new Promise<never>(() => {});
  if (error instanceof CoordinatorError) throw error; // usage errors: main prints them, exit 2
  if (error instanceof RunFailure) {
    reportFailure(state.ui.note, error.code, error.message);
    if (error.leave && state.signedIn) await state.client.request('POST', '/api/me/leave').catch(() => {});
  } else if (error instanceof ApiError) {
    reportFailure(state.ui.note, error.code, error.message);
  } else {
    throw error;
  }
  // Kept on failure too: a join, refusal or removal receipt is how a contributor shows what happened.
  if (state.options.receipts && state.signedIn) await writeReceipts(state, state.options.receipts).catch(() => {});
  return EXIT_FAILED;
}

export async function contributeRemotely(options: RemoteContributeOptions): Promise<number> {
  const url = coordinatorUrl(options.coordinator);
  // Read before anything goes over the network: a missing identity file is a usage error.
  const identity = options.signIn.kind === 'semaphore' ? await readSemaphoreIdentity(options.signIn.source) : undefined;
  const typedDigest = options.entropyPrompt ? await typedEntropy() : undefined;
  if (typedDigest === 'interrupted') return EXIT_FAILED;

  const renderer = createProgressRenderer(process.stderr);
  const ui: RunUi = {
    live: process.stderr.isTTY === true,
    progress: (event) => {
      if (!state.holdLive || event.type === 'finished') renderer.progress(event);
    },
    note: (line) => renderer.note(line),
  };
  if (url.protocol === 'http:' && !isLoopback(url.hostname)) {
    ui.note(`warning: ${url.origin} is not https: your session travels unencrypted`);
  }
  const client = new CoordinatorClient(url.href, { rideOutRestarts: restartNotices(ui.note) });
  const state: RemoteState = {
    client,
    ui,
    options,
    leaveController: new AbortController(),
    signedIn: false,
    leaving: false,
    asking: false,
    holdLive: false,
    closeRenderer: () => renderer.close(),
  };

  // The keys of earlier runs that died without cleaning up (SIGKILL, a crash).
  await removeDeadOwnersFolders(tmpdir(), WORK_DIR_PREFIX);
  const workFolder = await makeOwnedWorkFolder(tmpdir(), WORK_DIR_PREFIX);
  // Whatever ends the process (an error, Ctrl-C, process.exit): the keys of a turn do not stay.
  const removeWorkDir = (): void => workFolder.doneSync();
  process.on('exit', removeWorkDir);
  const stopListening = listenForInterrupts(state);
  let preparing: Promise<void> | undefined;
  try {
    return await signInAndContribute(state, { workDir: workFolder.path, identity, typedDigest }, (p) => {
      preparing = p;
    });
  } catch (error) {
    return await reportRunError(state, error);
  } finally {
    stopListening();
    // A curve still being built would start its threads after `ceremony` released the curve,
    // and keep the process alive.
    await preparing;
    renderer.close();
    removeWorkDir();
    process.off('exit', removeWorkDir);
  }
}
