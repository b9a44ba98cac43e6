/**
 * `checkManifest` and `ceremony check-manifest` against the ceremony's final test keys, from the
 * ceremony folder: the manifest that finalise wrote matches; every verifier of ceremony.json must
 * be listed and no other (deployment.manifest_mismatch), named by ceremony.json's `verifier` field;
 * a final zkey that is not the transcript's is refused (chain.file_hash_mismatch); a key whose δ
 * equals its γ is a MISMATCH (exit 1) with its own code, naming circuit and verifier.
 */
import assert from 'node:assert/strict';
import { copyFile, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { releaseBn128 } from '../../core/crypto/bn128.ts';
import { checkManifest } from '../../core/deployment/check-manifest.ts';
import { circuitOfVerifier } from '../../core/deployment/circuit-of-verifier.ts';
import type { DeltaManifest } from '../../core/manifest/delta-manifest.ts';
import { auditorConfigOf, copyCeremony, finalisedCeremony } from '../fixtures/ceremony-fixture.ts';
import { cleanUp } from '../helpers/clean-up.ts';
import { lines, runCli } from '../helpers/run-cli.ts';
import { allMatch } from './spec-delta-manifest.ts';
import { hashBytes } from '../../core/crypto/file-hash.ts';
import { rewriteTranscript } from '../helpers/forge-transcript.ts';
import { editSections, sectionOf } from '../helpers/zkey-tamper.ts';

/** Where γ2 and δ2 sit in a zkey's Groth16 header (section 2): after the field sizes, counts, α1, β1, β2. */
const GAMMA2_AT = 4 + 32 + 4 + 32 + 4 + 4 + 4 + 64 + 64 + 128;
const DELTA2_AT = GAMMA2_AT + 128 + 64;

let ceremonyDir: string;
let manifestPath: string;
let manifest: DeltaManifest;
let identifier: string;
const copies: string[] = [];

before(
  async () => {
    ({ dataDir: ceremonyDir } = await finalisedCeremony());
    manifestPath = join(ceremonyDir, 'final', 'manifest.json');
    manifest = JSON.parse(await readFile(manifestPath, 'utf8')) as DeltaManifest;
    const transcript = (await readFile(join(ceremonyDir, 'transcript', 'transcript.jsonl'), 'utf8')).trim();
    identifier = (JSON.parse(transcript.split('\n').at(-1)!) as { hash: string }).hash;
  },
  { timeout: 300_000 },
);

after(async () => {
  for (const copy of copies) await cleanUp(copy);
  await releaseBn128();
});

/** A private copy of the finalised ceremony, removed after the file. */
async function ceremonyCopy(): Promise<string> {
  const copy = await copyCeremony(ceremonyDir);
  copies.push(copy);
  return copy;
}

function summary(report: Awaited<ReturnType<typeof checkManifest>>): string[] {
  return report.verifiers.map((v) => `${v.verifier} ${v.match ? 'match' : 'MISMATCH'}`);
}

/** Each verifier's reasons joined, or 'match'. */
function reasonsOf(report: Awaited<ReturnType<typeof checkManifest>>): Record<string, string> {
  return Object.fromEntries(report.verifiers.map((v) => [v.verifier, v.match ? 'match' : v.reasons.join('; ')]));
}

test('verifier names map to circuit names', () => {
  assert.equal(circuitOfVerifier('VerifierTransact21'), 'transact21');
  assert.equal(circuitOfVerifier('VerifierTreeUpdate'), 'treeUpdate');
  assert.equal(circuitOfVerifier('VerifierRegister'), 'register');
  assert.equal(circuitOfVerifier('Verifier'), undefined);
  assert.equal(circuitOfVerifier('verifierRegister'), undefined);
  assert.equal(circuitOfVerifier('VerifierRegister.sol'), undefined);
});

describe('checkManifest', { timeout: 60_000 }, () => {
  test('the manifest written by finalise matches the nine final keys', async () => {
    const report = await checkManifest({ manifest, ceremonyDir, auditorConfig: auditorConfigOf(ceremonyDir) });
    assert.equal(report.identifier, identifier);
    assert.deepEqual(summary(report), allMatch(manifest));
    assert.ok(report.verifiers.every((v) => v.reasons.length === 0 && v.warnings.length === 0));
    // The fixture is a test network's (the development ptau): its matches guard nothing, and the report says so.
    assert.equal(report.warnings?.length, 1);
    assert.match(
      report.warnings[0]!,
      /^TEST-NETWORK CEREMONY \(.*"testNetwork": true.*\): its ptau's secret is public, so anyone can forge/,
    );
  });

  test('a changed digit, swapped coordinates, a missing field and a verifier not of the ceremony', async () => {
    const { VerifierRegister: register, VerifierTreeUpdate: treeUpdate } = manifest;
    const tampered: Record<string, unknown> = {
      ...manifest,
      VerifierRegister: {
        ...register,
        deltax1: `${register!.deltax1.slice(0, -1)}${register!.deltax1.endsWith('0') ? '1' : '0'}`,
      },
      VerifierTreeUpdate: { deltax1: treeUpdate!.deltax2, deltax2: treeUpdate!.deltax1 },
      VerifierTransact21: { deltax1: manifest.VerifierTransact21!.deltax1 },
      VerifierNoSuchCircuit: register,
      register: register,
    };
    const reasons = reasonsOf(
      await checkManifest({ manifest: tampered, ceremonyDir, auditorConfig: auditorConfigOf(ceremonyDir) }),
    );
    assert.match(
      reasons.VerifierRegister!,
      /^\[deployment\.manifest_mismatch\] deltax1 is \d+ in the manifest but \d+ in the final key of register$/,
    );
    assert.match(reasons.VerifierTreeUpdate!, /^\[deployment\.manifest_mismatch\] deltax1 is .*; .* deltax2 is .*$/);
    assert.equal(reasons.VerifierTransact21, '[deployment.manifest_mismatch] manifest entry has no deltax2');
    assert.equal(
      reasons.VerifierNoSuchCircuit,
      '[deployment.manifest_mismatch] VerifierNoSuchCircuit is not a verifier of the ceremony',
    );
    assert.equal(reasons.register, '[deployment.manifest_mismatch] register is not a verifier of the ceremony');
    assert.equal(reasons.VerifierTransact22, 'match');
  });

  test('a manifest listing one verifier of nine: the other eight are MISMATCH, each named', async () => {
    const report = await checkManifest({
      manifest: { VerifierRegister: manifest.VerifierRegister },
      ceremonyDir,
      auditorConfig: auditorConfigOf(ceremonyDir),
    });
    const reasons = reasonsOf(report);
    assert.deepEqual(Object.keys(reasons), Object.keys(manifest));
    assert.equal(reasons.VerifierRegister, 'match');
    for (const name of Object.keys(manifest).filter((name) => name !== 'VerifierRegister')) {
      assert.equal(
        reasons[name],
        `[deployment.manifest_mismatch] the manifest has no entry for ${name}, a verifier of the ceremony`,
      );
    }
  });

  test("a verifier renamed in the folder's ceremony.json is refused: the transcript commits its name", async () => {
    const copy = await ceremonyCopy();
    const configPath = join(copy, 'ceremony.json');
    const config = JSON.parse(await readFile(configPath, 'utf8')) as { circuits: Array<Record<string, string>> };
    config.circuits.find((c) => c.name === 'register')!.verifier = 'RegisterVerifier';
    await writeFile(configPath, JSON.stringify(config));
    const { VerifierRegister: register, ...rest } = manifest;
    const renamed = { RegisterVerifier: register, ...rest };
    // Against your own ceremony.json: the folder's differs.
    await assert.rejects(
      checkManifest({ manifest: renamed, ceremonyDir: copy, auditorConfig: auditorConfigOf(ceremonyDir) }),
      (error: { code?: string }) => error.code === 'config.publication_mismatch',
    );
    // Even taking the folder's word for it: the finalised entry commits VerifierRegister.
    await assert.rejects(
      checkManifest({ manifest: renamed, ceremonyDir: copy, auditorConfig: auditorConfigOf(copy) }),
      (error: { code?: string; message: string }) =>
        error.code === 'deployment.verifier_name_mismatch' &&
        /names the verifiers RegisterVerifier, /.test(error.message),
    );
  });

  test("a final zkey that is not the transcript's is refused, though its δ is the manifest's", async () => {
    const copy = await ceremonyCopy();
    await copyFile(join(copy, 'final', 'transact22.zkey'), join(copy, 'final', 'transact21.zkey'));
    const tampered = { ...manifest, VerifierTransact21: manifest.VerifierTransact22! };
    const reasons = reasonsOf(
      await checkManifest({ manifest: tampered, ceremonyDir: copy, auditorConfig: auditorConfigOf(copy) }),
    );
    assert.equal(
      reasons.VerifierTransact21,
      '[chain.file_hash_mismatch] final/transact21.zkey is not the final key the transcript records ' +
        '(BLAKE2b-512 differs)',
    );
  });

  test('without a zkey, no vkey.json stands in; a committed final key with δ = γ is a MISMATCH', async () => {
    const copy = await ceremonyCopy();
    await rm(join(copy, 'final', 'register.zkey'));
    // A final key whose δ2 is its γ2 (no Phase 2), which a forging coordinator commits in its transcript.
    const finalPath = join(copy, 'final', 'transact21.zkey');
    const forged = editSections(await readFile(finalPath), (file) => {
      const header = sectionOf(file, 2).data;
      header.copy(header, DELTA2_AT, GAMMA2_AT, GAMMA2_AT + 128);
    });
    await writeFile(finalPath, forged);
    // The forger commits the key, and a finalised entry without the verifier sources (their hashes would name
    // the honest key's verifier).
    await rewriteTranscript(copy, (entries) =>
      entries.map((e) => {
        if (e.type === 'beacon' && e.circuit === 'transact21') return { ...e, fileHash: hashBytes(forged) };
        if (e.type !== 'finalised') return e;
        const { verifierSourceHashes: _sources, ...rest } = e;
        return rest;
      }),
    );
    const vkey = JSON.parse(await readFile(join(copy, 'final', 'transact21.vkey.json'), 'utf8')) as {
      vk_gamma_2: string[][];
    };
    const gamma = vkey.vk_gamma_2[0]!;
    const changed = { ...manifest, VerifierTransact21: { deltax1: gamma[1]!, deltax2: gamma[0]! } };
    const report = await checkManifest({ manifest: changed, ceremonyDir: copy, auditorConfig: auditorConfigOf(copy) });
    const byName = Object.fromEntries(report.verifiers.map((v) => [v.verifier, v]));
    assert.equal(byName.VerifierRegister!.match, false);
    assert.match(
      byName.VerifierRegister!.reasons[0]!,
      /^\[chain\.file_missing\] no final\/register\.zkey: .*never from/,
    );
    assert.equal(byName.VerifierTransact21!.match, false);
    assert.deepEqual(byName.VerifierTransact21!.reasons, [
      '[vkey.delta_equals_gamma] circuit transact21 (VerifierTransact21): δ ' +
        'equals γ in the final key; the key never went through Phase 2 and ' +
        'anyone can forge its proofs',
    ]);

    const manifestFile = join(copy, 'changed-manifest.json');
    await writeFile(manifestFile, JSON.stringify(changed));
    const run = await runCli(['check-manifest', manifestFile, copy]);
    assert.equal(run.code, 1);
    assert.equal(
      lines(run.stdout).find((line) => line.startsWith('VerifierTransact21 ')),
      'VerifierTransact21 MISMATCH',
    );
    assert.match(
      run.stderr,
      /^VerifierTransact21: \[vkey\.delta_equals_gamma\] circuit transact21 \(VerifierTransact21\): δ equals γ/m,
    );
  });
});

describe('ceremony check-manifest', { timeout: 60_000 }, () => {
  test('exits 0 with the identifier and one match line per verifier', async () => {
    const run = await runCli(['check-manifest', manifestPath, ceremonyDir]);
    assert.equal(run.code, 0, run.stderr);
    assert.deepEqual(lines(run.stdout), [`ceremony identifier: ${identifier}`, ...allMatch(manifest)]);
    assert.deepEqual(
      lines(run.stderr).map((line) => line.replace(/ \(.*\):/, ' (…):')),
      ["warning: TEST-NETWORK CEREMONY (…): its ptau's secret is public, so anyone can forge proofs for these keys"],
    );
  });

  test('exits 1 when one delta differs, naming it on stderr', async () => {
    const entry = manifest.VerifierTransact84!;
    const copy = await ceremonyCopy();
    const path = join(copy, 'tampered.json');
    const deltax2 = `${entry.deltax2.slice(0, -1)}${entry.deltax2.endsWith('0') ? '1' : '0'}`;
    await writeFile(path, JSON.stringify({ ...manifest, VerifierTransact84: { ...entry, deltax2 } }));
    const run = await runCli(['check-manifest', path, ceremonyDir]);
    assert.equal(run.code, 1);
    assert.deepEqual(
      lines(run.stdout).slice(1),
      Object.keys(manifest).map((name) => `${name} ${name === 'VerifierTransact84' ? 'MISMATCH' : 'match'}`),
    );
    assert.match(
      run.stderr,
      new RegExp(
        '^VerifierTransact84: \\[deployment\\.manifest_mismatch\\] ' +
          'deltax2 is \\d+ in the manifest but \\d+ in the final key of transact84$',
        'm',
      ),
    );
  });

  test('exits 1 for a manifest that lists one verifier of nine', async () => {
    const copy = await ceremonyCopy();
    const path = join(copy, 'one.json');
    await writeFile(path, JSON.stringify({ VerifierRegister: manifest.VerifierRegister }));
    const run = await runCli(['check-manifest', path, ceremonyDir]);
    assert.equal(run.code, 1, run.stderr);
    assert.equal(lines(run.stdout).filter((line) => line.endsWith(' MISMATCH')).length, 8);
    assert.match(run.stderr, /^VerifierTreeUpdate: \[deployment\.manifest_mismatch\] the manifest has no entry/m);
  });

  test('the final/ folder instead of the ceremony folder: exit 2, saying which folder to give', async () => {
    const run = await runCli(['check-manifest', manifestPath, join(ceremonyDir, 'final')]);
    assert.equal(run.code, 2, run.stderr);
    assert.match(run.stderr, /\[input\.invalid\]: .* is not a ceremony folder: it has no ceremony\.json/);
  });
});
