/**
 * Every `ceremony` sub-command, in the order `--help` lists them. Each entry names its module's
 * loader rather than importing it, so `ceremony --help` and every command load only the module of
 * the command that runs (the others pull in snarkjs, Express, BullMQ…). `summary` is what the
 * top-level `--help` lists; it matches the command's own description (tests/cli.test.ts checks it).
 */
import type { Command } from 'commander';

export interface CommandEntry {
  name: string;
  summary: string;
  load: () => Promise<() => Command>;
}

export const COMMANDS: CommandEntry[] = [
  { name: 'init', summary: 'check every circuit against ceremony.json and the ptau, and create contribution 0 of each chain', load: async () => (await import('./init.ts')).initCommand },
  { name: 'contribute', summary: 'add one contribution (fresh OS entropy, never stored) to the head of a circuit, verify it and commit it', load: async () => (await import('./contribute.ts')).contributeCommand },
  { name: 'verify', summary: 'check that FILE is a valid next link on the head of CIRCUIT, without changing anything', load: async () => (await import('./verify.ts')).verifyCommand },
  { name: 'finalise', summary: 'apply the random beacon to every head; write final keys, verification keys, Solidity verifiers and the delta manifest', load: async () => (await import('./finalise.ts')).finaliseCommand },
  { name: 'audit', summary: 're-verify a published ceremony folder from its files alone: every link, every final key, the transcript and the manifest', load: async () => (await import('./audit.ts')).auditCommand },
  { name: 'dev-ptau', summary: 'make an INSECURE prepared powers of tau from a public secret, for test networks and benchmarks only', load: async () => (await import('./dev-ptau.ts')).devPtauCommand },
  { name: 'check-manifest', summary: "check the delta manifest against the verification keys of the ceremony's final keys", load: async () => (await import('./check-manifest.ts')).checkManifestCommand },
  { name: 'verify-deployment', summary: 'check that deployed verifier contracts carry the delta points of the manifest', load: async () => (await import('./verify-deployment.ts')).verifyDeploymentCommand },
  { name: 'verify-link', summary: 'check that NEXT is a valid next link on the already-verified PREV (no r1cs or ptau needed); prints the contribution hash', load: async () => (await import('./verify-link.ts')).verifyLinkCommand },
  { name: 'serve', summary: 'run the coordinator server (sign-in, queues, uploads, verification, transcript API); config from the environment', load: async () => (await import('./serve.ts')).serveCommand },
  { name: 'worker', summary: "run a verification worker on the coordinator's Redis queue (until SIGTERM)", load: async () => (await import('./worker.ts')).workerCommand },
];
