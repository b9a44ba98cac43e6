/**
 * Real keys for the verification tests: a fresh ceremony of only the circuits a test needs
 * (initialising all nine would cost seconds per file), with one local contribution on `register`,
 * and helpers that make candidates on a head with snarkjs, as a contributor's client would.
 */
import { copyFile, mkdtemp, rename, rm } from 'node:fs/promises';
import { randomBytes } from 'node:crypto';
import { tmpdir } from 'node:os';
import path from 'node:path';
import * as snarkjs from 'snarkjs';
import { newCeremonyDir } from '../fixtures/ceremony-fixture.ts';
import { initCeremony } from '../../core/ceremony/init-ceremony.ts';
import { contributeLocally } from '../../core/ceremony/extend-chain.ts';
import { ceremonyPaths } from '../../core/data-folder/ceremony-paths.ts';
import type { VerificationOutcome, VerificationRequest } from '../../core/verifier-contract/verifier-contract.ts';

export interface Candidate {
  path: string;
  hash: string;
  /** The contributor's name, recorded in the contribution. */
  name: string;
}

export interface VerificationFixture {
  dataDir: string;
  /** A scratch folder for candidates. */
  work: string;
  headPath(circuit: string): string;
  /** A valid next link on the head of `circuit` made by `name`, and the contribution hash snarkjs printed for it. */
  candidate(circuit: string, name: string): Promise<Candidate>;
  /** A request to verify `candidatePath` against the head of `circuit`. */
  request(contributionId: string, circuit: string, candidatePath: string): VerificationRequest;
  /** A path in the scratch folder that does not exist (yet). */
  missingPath(name: string): string;
  cleanup(): Promise<void>;
}

export async function verificationFixture(circuits: string[]): Promise<VerificationFixture> {
  const dataDir = await newCeremonyDir({
    circuits,
  });
  await initCeremony(dataDir);
  const heads = new Map(circuits.map((c) => [c, 0]));
  if (heads.has('register')) {
    await contributeLocally(dataDir, 'register', 'alice');
    heads.set('register', 1);
  }
  const paths = ceremonyPaths(dataDir);
  const work = await mkdtemp(path.join(tmpdir(), 'verification-work-'));
  const headPath = (circuit: string): string => paths.zkeyPath(circuit, heads.get(circuit)!);
  let made = 0;

  return {
    dataDir,
    work,
    headPath,
    async candidate(circuit, name) {
      const out = path.join(work, `${name}-${++made}.zkey`);
      const hash = await snarkjs.zKey.contribute(headPath(circuit), out, name, randomBytes(32).toString('hex'));
      return { path: out, hash: Buffer.from(hash).toString('hex'), name };
    },
    request(contributionId, circuit, candidatePath) {
      return {
        contributionId,
        circuit,
        headIndex: heads.get(circuit)!,
        headZkeyPath: headPath(circuit),
        candidatePath,
      };
    },
    missingPath(name) {
      return path.join(work, `${name}-missing-${++made}.zkey`);
    },
    async cleanup() {
      await rm(work, { recursive: true, force: true });
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}

/** The outcome a verifier gives `candidate` verified as `contributionId`: valid, with its hash and name. */
export function validOutcome(contributionId: string, candidate: Candidate): VerificationOutcome {
  return { contributionId, status: 'valid', contributionHash: candidate.hash, recordedName: candidate.name };
}

/** Puts a copy of `source` at `target` the way an upload lands: written aside, then renamed. */
export async function placeFile(source: string, target: string): Promise<void> {
  await copyFile(source, `${target}.part`);
  await rename(`${target}.part`, target);
}

/**
 * Collects a dispatcher's outcomes; `next(id)` resolves with the next outcome for that id not yet
 * taken (whether it arrived before or after the call).
 */
export function outcomeCollector<T extends { contributionId: string }>(): {
  listener: (outcome: T) => void;
  all: T[];
  next(contributionId: string, timeoutMs?: number): Promise<T>;
} {
  const all: T[] = [];
  const unread = new Map<string, T[]>();
  const waiters = new Map<string, Array<(outcome: T) => void>>();
  return {
    all,
    listener(outcome) {
      all.push(outcome);
      const waiting = waiters.get(outcome.contributionId);
      if (waiting && waiting.length > 0) waiting.shift()!(outcome);
      else unread.set(outcome.contributionId, [...(unread.get(outcome.contributionId) ?? []), outcome]);
    },
    next(contributionId, timeoutMs = 30_000) {
      const ready = unread.get(contributionId);
      if (ready && ready.length > 0) return Promise.resolve(ready.shift()!);
      return new Promise((resolve, reject) => {
        const deliver = (outcome: T): void => {
          clearTimeout(timer);
          resolve(outcome);
        };
        const timer = setTimeout(() => {
          const list = waiters.get(contributionId) ?? [];
          list.splice(list.indexOf(deliver), 1);
          reject(new Error(`no outcome for ${contributionId} within ${timeoutMs} ms`));
        }, timeoutMs);
        waiters.set(contributionId, [...(waiters.get(contributionId) ?? []), deliver]);
      });
    },
  };
}
