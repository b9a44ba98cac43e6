/**
 * Every `ceremony` sub-command, in the order `--help` lists them. Each entry names its module's
 * loader rather than importing it, so `ceremony --help` and every command load only the module of
 * the command that runs (the others pull in snarkjs, Express, BullMQ…). `usage` and `summary` are
 * what the top-level `--help` lists; they match the command's own (tests/cli/commands.test.ts checks it).
 */
import type { Command } from 'commander';

export interface CommandEntry {
  name: string;
  /** What follows the name in the top-level --help (options marker and arguments). */
  usage: string;
  summary: string;
  load: () => Promise<() => Command>;
}

export const COMMANDS: CommandEntry[] = [
  {
    name: 'init',
    usage: '[options]',
    summary: 'check every circuit against ceremony.json and the ptau, and create contribution 0 of each chain',
    load: async () => (await import('./init.ts')).initCommand,
  },
  {
    name: 'contribute',
    usage: '[options] [circuit...]',
    summary:
      "add a contribution: the coordinator's local command (CIRCUIT|--all, " +
      "on a data folder) or a contributor's remote one (--coordinator URL, " +
      'in its queue)',
    load: async () => (await import('./contribute.ts')).contributeCommand,
  },
  {
    name: 'verify',
    usage: '[options] <circuit> <file>',
    summary: 'check that FILE is a valid next link on the head of CIRCUIT, without changing anything',
    load: async () => (await import('./verify.ts')).verifyCommand,
  },
  {
    name: 'announce-beacon',
    usage: '[options]',
    summary:
      'commit the transcript to the beacon before anyone can know it: the hash of a future block of a public ' +
      'chain; closes contributions',
    load: async () => (await import('./announce-beacon.ts')).announceBeaconCommand,
  },
  {
    name: 'finalise',
    usage: '[options]',
    summary:
      'apply the random beacon to every head; write final keys, verification ' +
      'keys, Solidity verifiers and the delta manifest',
    load: async () => (await import('./finalise.ts')).finaliseCommand,
  },
  {
    name: 'audit',
    usage: '[options] <dir>',
    summary:
      're-verify a published ceremony folder from its files alone: the ' +
      'pinned ptau, every link, every final key, the transcript and the manifest',
    load: async () => (await import('./audit.ts')).auditCommand,
  },
  {
    name: 'fetch',
    usage: '[options] <url> <dir>',
    summary:
      "download every file a coordinator publishes into DIR, laid out for `ceremony audit`, with your checkout's " +
      'ceremony.json',
    load: async () => (await import('./fetch.ts')).fetchCommand,
  },
  {
    name: 'dev-ptau',
    usage: '[options] <out>',
    summary: 'make an INSECURE prepared powers of tau from a public secret, for test networks and benchmarks only',
    load: async () => (await import('./dev-ptau.ts')).devPtauCommand,
  },
  {
    name: 'verify-receipt',
    usage: '[options] <receipts.json> [dir]',
    summary:
      'check that signed receipts are in the transcript and in the final keys, ' +
      'from a published folder or a coordinator',
    load: async () => (await import('./verify-receipt.ts')).verifyReceiptCommand,
  },
  {
    name: 'check-manifest',
    usage: '<manifest.json> <dir>',
    summary: "check the delta manifest against the ceremony's final keys: every verifier, each its key's δ",
    load: async () => (await import('./check-manifest.ts')).checkManifestCommand,
  },
  {
    name: 'publish',
    usage: '[options] <dir> <out>',
    summary:
      'write exactly the public files of a ceremony (never state/ or ' +
      'uploads/) to a new folder or .tar.gz, with SHA256SUMS, for `ceremony audit`',
    load: async () => (await import('./publish.ts')).publishCommand,
  },
  {
    name: 'verify-deployment',
    usage: '[options] <rpc-url> <manifest.json> <verifiers.json>',
    summary:
      'check deployed verifier contracts: δ against the manifest, or (--ceremony) every constant of the final ' +
      'keys and the recompiled verifiers',
    load: async () => (await import('./verify-deployment.ts')).verifyDeploymentCommand,
  },
  {
    name: 'check-fees',
    usage: '[options] <targets.json>',
    summary: 'check the published fees against the pools (withdrawFeeBps) and the relayer (/quote, /gas/quote)',
    load: async () => (await import('./check-fees.ts')).checkFeesCommand,
  },
  {
    name: 'verify-link',
    usage: '[options] <prev> <next>',
    summary:
      'check that NEXT is a valid next link on the already-verified PREV (no ' +
      'r1cs or ptau needed); prints the contribution hash',
    load: async () => (await import('./verify-link.ts')).verifyLinkCommand,
  },
  {
    name: 'serve',
    usage: '[options]',
    summary:
      'run the coordinator server (sign-in, queues, uploads, verification, ' +
      'transcript API); config from the environment',
    load: async () => (await import('./serve.ts')).serveCommand,
  },
  {
    name: 'worker',
    usage: '[options]',
    summary: "run a verification worker on the coordinator's Redis queue (until SIGTERM)",
    load: async () => (await import('./worker.ts')).workerCommand,
  },
];
