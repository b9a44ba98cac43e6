/**
 * Every `ceremony` sub-command, in the order `--help` lists them, each under its role (who runs it).
 * Each entry names its module's loader rather than importing it, so `ceremony --help` and every
 * command load only the module of the command that runs (the others pull in snarkjs, Express,
 * BullMQ…). `summary` is what the top-level `--help` lists beside the name; it is the command's own
 * description (tests/cli/commands.test.ts checks it). A new command is an entry here and its module;
 * its options, notes and examples live in its module (help's style: command-help.ts).
 */
import type { Command } from 'commander';

/** Who runs a command: the headings of the top-level --help, in their order. */
export const COMMAND_ROLES = {
  coordinator: 'Coordinator commands:',
  contributor: 'Contributor commands:',
  auditor: 'Auditor commands:',
  deployment: 'Deployment commands:',
} as const;

export interface CommandEntry {
  name: string;
  role: keyof typeof COMMAND_ROLES;
  summary: string;
  load: () => Promise<() => Command>;
}

export const COMMANDS: CommandEntry[] = [
  {
    name: 'serve',
    role: 'coordinator',
    summary:
      'run the coordinator server (sign-in, queues, uploads, verification, ' +
      'transcript API); config from the environment',
    load: async () => (await import('./serve.ts')).serveCommand,
  },
  {
    name: 'worker',
    role: 'coordinator',
    summary: "run a verification worker on the coordinator's Redis queue (until SIGTERM)",
    load: async () => (await import('./worker.ts')).workerCommand,
  },
  {
    name: 'init',
    role: 'coordinator',
    summary: 'check every circuit against ceremony.json and the ptau, and create contribution 0 of each chain',
    load: async () => (await import('./init.ts')).initCommand,
  },
  {
    name: 'verify',
    role: 'coordinator',
    summary: 'check that FILE is a valid next link on the head of CIRCUIT, without changing anything',
    load: async () => (await import('./verify.ts')).verifyCommand,
  },
  {
    name: 'announce-beacon',
    role: 'coordinator',
    summary:
      'commit the transcript to the beacon before anyone can know it: the hash of a future block of a public ' +
      'chain; closes contributions',
    load: async () => (await import('./announce-beacon.ts')).announceBeaconCommand,
  },
  {
    name: 'finalise',
    role: 'coordinator',
    summary:
      'apply the random beacon to every head; write final keys, verification ' +
      'keys, Solidity verifiers and the delta manifest',
    load: async () => (await import('./finalise.ts')).finaliseCommand,
  },
  {
    name: 'publish',
    role: 'coordinator',
    summary:
      'write exactly the public files of a ceremony (never state/ or ' +
      'uploads/) to a new folder or .tar.gz, with SHA256SUMS, for `ceremony audit`',
    load: async () => (await import('./publish.ts')).publishCommand,
  },
  {
    name: 'backup',
    role: 'coordinator',
    summary:
      'copy a ceremony consistently while its coordinator runs (database, transcript, chains, state and ' +
      'the receipt signing key) to a new folder that a coordinator can serve again',
    load: async () => (await import('./backup.ts')).backupCommand,
  },
  {
    name: 'dev-ptau',
    role: 'coordinator',
    summary: 'make an INSECURE prepared powers of tau from a public secret, for test networks and benchmarks only',
    load: async () => (await import('./dev-ptau.ts')).devPtauCommand,
  },
  {
    name: 'contribute',
    role: 'contributor',
    summary:
      "add a contribution: the coordinator's local command (CIRCUIT|--all, " +
      "on a data folder) or a contributor's remote one (--coordinator URL, " +
      'in its queue)',
    load: async () => (await import('./contribute.ts')).contributeCommand,
  },
  {
    name: 'verify-receipt',
    role: 'contributor',
    summary:
      'check that signed receipts are in the transcript and in the final keys, ' +
      'from a published folder or a coordinator',
    load: async () => (await import('./verify-receipt.ts')).verifyReceiptCommand,
  },
  {
    name: 'fetch',
    role: 'auditor',
    summary:
      "download every file a coordinator publishes into DIR, laid out for `ceremony audit`, with your checkout's " +
      'ceremony.json',
    load: async () => (await import('./fetch.ts')).fetchCommand,
  },
  {
    name: 'audit',
    role: 'auditor',
    summary:
      're-verify a published ceremony folder from its files alone: the ' +
      'pinned ptau, each contribution 0, every final key against it, the transcript and the manifest',
    load: async () => (await import('./audit.ts')).auditCommand,
  },
  {
    name: 'verify-link',
    role: 'auditor',
    summary:
      'check that NEXT is a valid next link on the already-verified PREV (no ' +
      'r1cs or ptau needed); prints the contribution hash',
    load: async () => (await import('./verify-link.ts')).verifyLinkCommand,
  },
  {
    name: 'check-manifest',
    role: 'deployment',
    summary: "check the delta manifest against the ceremony's final keys: every verifier, each its key's δ",
    load: async () => (await import('./check-manifest.ts')).checkManifestCommand,
  },
  {
    name: 'verify-deployment',
    role: 'deployment',
    summary:
      'check deployed verifier contracts: δ against the manifest, or (--ceremony) that each is the verifier of ' +
      'its final key, recompiled and compared byte for byte',
    load: async () => (await import('./verify-deployment.ts')).verifyDeploymentCommand,
  },
  {
    name: 'check-fees',
    role: 'deployment',
    summary: 'check the published fees against the pools (withdrawFeeBps) and the relayer (/quote, /gas/quote)',
    load: async () => (await import('./check-fees.ts')).checkFeesCommand,
  },
];
