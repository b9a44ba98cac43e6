/**
 * `ceremony contribute`, in two forms under one name:
 *  - the coordinator's local command: `ceremony contribute CIRCUIT|--all [--name] [--data]` adds a
 *    contribution to the chains of a data folder on this machine (core/ceremony/extend-chain.ts);
 *  - a contributor's remote command: `ceremony contribute --coordinator URL <sign-in> [circuit…]`
 *    takes turns on a coordinator's queue over HTTP, as the page does
 *    (cli/contributor/contribute-remotely.ts, loaded only for this form).
 * Options of one form given with the other are a usage error (exit 2). Each form loads its own
 * modules when it runs: the local one loads snarkjs at once, which the remote one's start-up (and
 * sign-in) need not wait for.
 */
import { Argument, Command, Option } from 'commander';
import { helpExamples, helpNotes } from './command-help.ts';
import { CoordinatorError } from '../../core/errors.ts';
import { dataDirOption } from './shared-options.ts';
import type { SignInMethod } from '../contributor/contribute-remotely.ts';

const DEFAULT_LOCAL_NAME = 'anonymous';
const DEFAULT_MAX_ATTEMPTS = 3;
const DEMO_NAME = /^[a-z0-9-]{1,32}$/i;

interface ContributeOptions {
  // the coordinator's local form
  all?: boolean;
  name?: string;
  data: string;
  // a contributor's remote form
  coordinator?: string;
  github?: boolean;
  semaphoreIdentity?: string;
  semaphoreIdentityEnv?: string;
  demo?: string;
  receipts?: string;
  entropyPrompt?: boolean;
  maxAttempts?: string;
  wholeKey?: boolean;
}

const LOCAL_ONLY = ['all', 'name', 'data'] as const;
const REMOTE_ONLY = [
  'github',
  'semaphoreIdentity',
  'semaphoreIdentityEnv',
  'demo',
  'receipts',
  'entropyPrompt',
  'maxAttempts',
  'wholeKey',
] as const;
const FLAG: Record<(typeof LOCAL_ONLY)[number] | (typeof REMOTE_ONLY)[number], string> = {
  all: '--all',
  name: '--name',
  data: '--data',
  github: '--github',
  semaphoreIdentity: '--semaphore-identity',
  semaphoreIdentityEnv: '--semaphore-identity-env',
  demo: '--demo',
  receipts: '--receipts',
  entropyPrompt: '--entropy-prompt',
  maxAttempts: '--max-attempts',
  wholeKey: '--whole-key',
};

const HELP_AFTER = `
Two forms, one name:

  The coordinator's local command (extends the chains of a data folder on this machine):
    ceremony contribute CIRCUIT|--all [--name NAME] [--data DIR]

  A contributor's remote command (takes turns in a coordinator's queue, as the web page does):
    ceremony contribute --coordinator URL (--github | --semaphore-identity FILE |
                        --semaphore-identity-env NAME | --demo NAME) [--receipts FILE]
                        [--entropy-prompt] [--max-attempts N] [--whole-key] [CIRCUIT...]
    Without circuits: every circuit, in ceremony order. Entropy: 64 fresh bytes from the OS per
    contribution (with --entropy-prompt, mixed with text you type, never shown); never written.
    Only the sections a contribution changes cross the network where the coordinator takes
    contribution deltas (about a fifth of a large key each way); --whole-key moves whole keys.
    Ctrl-C leaves the queue (during a turn it asks first); rerun after a crash to pick up where
    the queue stands. Progress on stderr; on stdout one line per accepted circuit:
    CIRCUIT #INDEX contribution hash HASH.

Exit codes: 0 done (every circuit accepted), 1 a refusal or an error, 2 a usage error.
See docs/contribute-from-terminal.md.`;

function usage(message: string): CoordinatorError {
  return new CoordinatorError('usage.invalid_arguments', message);
}

function signInMethod(options: ContributeOptions): SignInMethod {
  const chosen = [
    options.github ? '--github' : undefined,
    options.semaphoreIdentity !== undefined ? '--semaphore-identity' : undefined,
    options.semaphoreIdentityEnv !== undefined ? '--semaphore-identity-env' : undefined,
    options.demo !== undefined ? '--demo' : undefined,
  ].filter((flag) => flag !== undefined);
  if (chosen.length === 0)
    throw usage(
      'choose how to sign in: --github, --semaphore-identity FILE, ' +
        '--semaphore-identity-env NAME, or --demo NAME (test networks)',
    );
  if (chosen.length > 1) throw usage(`sign in one way only, not ${chosen.join(' and ')}`);
  if (options.github) return { kind: 'github' };
  if (options.semaphoreIdentity !== undefined)
    return { kind: 'semaphore', source: { file: options.semaphoreIdentity } };
  if (options.semaphoreIdentityEnv !== undefined) {
    if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(options.semaphoreIdentityEnv))
      throw usage(
        `--semaphore-identity-env takes the name of an environment variable, not "${options.semaphoreIdentityEnv}"`,
      );
    return { kind: 'semaphore', source: { envVar: options.semaphoreIdentityEnv } };
  }
  if (!DEMO_NAME.test(options.demo!))
    throw usage(`--demo takes a name of 1 to 32 letters, digits or dashes, not "${options.demo}"`);
  return { kind: 'demo', name: options.demo! };
}

function maxAttempts(raw: string | undefined): number {
  if (raw === undefined) return DEFAULT_MAX_ATTEMPTS;
  const value = Number(raw);
  if (!/^\d+$/.test(raw) || !Number.isSafeInteger(value) || value < 1)
    throw usage(`--max-attempts takes a whole number of at least 1, not "${raw}"`);
  return value;
}

export function contributeCommand(): Command {
  const command = new Command('contribute')
    .description(
      "add a contribution: the coordinator's local command (CIRCUIT|--all, " +
        "on a data folder) or a contributor's remote one (--coordinator URL, " +
        'in its queue)',
    )
    .addArgument(
      new Argument('[circuit...]', 'local: one circuit (or --all); remote: the circuits to contribute to').default(
        undefined,
        'remote: every circuit, in ceremony order',
      ),
    )
    .optionsGroup("The coordinator's local form (on a data folder):")
    .option('--all', 'local: contribute to every circuit, in ceremony order')
    .addOption(
      new Option('--name <name>', 'local: contributor name recorded in the key and the transcript').default(
        DEFAULT_LOCAL_NAME,
      ),
    )
    .addOption(dataDirOption())
    .optionsGroup("A contributor's remote form (in a coordinator's queue; sign in one way):")
    .option('--coordinator <url>', "remote: the coordinator's address; turns are taken in its queue")
    .option('--github', 'remote: sign in with GitHub (device flow: enter a code at github.com)')
    .option('--semaphore-identity <file>', 'remote: sign in anonymously with the exported Semaphore identity in FILE')
    .option('--semaphore-identity-env <name>', 'remote: same, with the identity in the environment variable NAME')
    .option('--demo <name>', 'remote: the demo sign-in of a test network on loopback')
    .option(
      '--receipts <file>',
      "remote: save the coordinator's signed receipts to FILE (as GET /api/me/receipts answers)",
    )
    .option('--entropy-prompt', 'remote: also mix in text you type (not shown, stored or sent)')
    .addOption(
      new Option('--max-attempts <n>', 'remote: refused attempts of one circuit before giving up').default(
        undefined,
        String(DEFAULT_MAX_ATTEMPTS),
      ),
    )
    .option('--whole-key', 'remote: download and upload whole keys even where the coordinator takes deltas')
    .optionsGroup('Options:')
    .addHelpText('after', helpNotes(HELP_AFTER))
    .addHelpText(
      'after',
      helpExamples(
        [
          'a contributor: every circuit, signed in with GitHub, the receipts saved',
          'ceremony contribute --coordinator https://ceremony.example --github \\\n--receipts receipts.json',
        ],
        [
          "the coordinator's own contribution to every chain of its data folder",
          'ceremony contribute --all --name coordinator --data ceremony-data',
        ],
      ),
    );
  return command.action(async (circuits: string[], options: ContributeOptions) => {
    const given = (key: keyof ContributeOptions): boolean =>
      options[key] !== undefined && command.getOptionValueSource(key) !== 'default';
    if (options.coordinator !== undefined) await contributeInQueue(options.coordinator, circuits, options, given);
    else await contributeHere(circuits, options, given);
  });
}

/** A contributor's remote form: turns in the coordinator's queue; the local form's options refused. */
async function contributeInQueue(
  coordinator: string,
  circuits: string[],
  options: ContributeOptions,
  given: (key: keyof ContributeOptions) => boolean,
): Promise<void> {
  const local = LOCAL_ONLY.filter(given);
  if (local.length > 0) {
    throw usage(
      `${local.map((k) => FLAG[k]).join(', ')} ` +
        `belong${local.length === 1 ? 's' : ''} to the coordinator's local ` +
        `form; with --coordinator, contributions are made in the coordinator's ` +
        `queue (see --help)`,
    );
  }
  const { contributeRemotely } = await import('../contributor/contribute-remotely.ts');
  process.exitCode = await contributeRemotely({
    coordinator,
    signIn: signInMethod(options),
    circuits,
    receipts: options.receipts,
    entropyPrompt: options.entropyPrompt === true,
    maxAttempts: maxAttempts(options.maxAttempts),
    wholeKey: options.wholeKey === true,
  });
}

/** The coordinator's local form: one circuit or every one of its data folder; the remote form's options refused. */
async function contributeHere(
  circuits: string[],
  options: ContributeOptions,
  given: (key: keyof ContributeOptions) => boolean,
): Promise<void> {
  const remote = REMOTE_ONLY.filter(given);
  if (remote.length > 0) {
    throw usage(
      `${remote.map((k) => FLAG[k]).join(', ')} ` +
        `belong${remote.length === 1 ? 's' : ''} to a contributor's remote ` +
        `form: add --coordinator URL (see --help)`,
    );
  }
  if (circuits.length > 1) throw usage('the local form contributes to one circuit (or --all); name one');
  const circuit = circuits[0];
  if (Boolean(circuit) === Boolean(options.all)) {
    throw usage('name one circuit, or pass --all for every circuit');
  }
  const [{ contributeLocally }, { openCeremony }, { withStderrProgress }] = await Promise.all([
    import('../../core/ceremony/extend-chain.ts'),
    import('../../core/ceremony/open-ceremony.ts'),
    import('../progress/with-stderr-progress.ts'),
  ]);
  const name = options.name ?? DEFAULT_LOCAL_NAME;
  const names = options.all ? (await openCeremony(options.data)).config.circuits.map((c) => c.name) : [circuit!];
  await withStderrProgress(async (progress) => {
    for (const each of names) {
      const accepted = await contributeLocally(options.data, each, name, progress);
      process.stdout.write(`${accepted.circuit} #${accepted.index} contribution hash ${accepted.contributionHash}\n`);
    }
  });
}
