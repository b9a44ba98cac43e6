/**
 * The development ptau (core/ptau/dev-ptau.ts) made from its known secret: byte for byte what
 * snarkjs's own newAccumulator + beacon + preparePhase2 make, deterministic, accepted by
 * `powersoftau verify`, marked insecure, and good for a key whose proofs verify and for
 * `ceremony init` of the project's ceremony; made beside its target, where a killed run's leftovers
 * are removed by the next.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import * as snarkjs from 'snarkjs';
import { getBn128, releaseBn128 } from '../../core/crypto/bn128.ts';
import { lagrangeScalars } from '../../core/ptau/lagrange-sections.ts';
import { createDevPtau, createDevPtauWithSnarkjs } from '../../core/ptau/dev-ptau.ts';
import { readPtauSummary } from '../../core/ptau/ptau-header.ts';
import { compileCircuit } from '../../core/setup/compile-circuit.ts';
import { initCeremony } from '../../core/ceremony/init-ceremony.ts';
import { multiplicationCircuitSource } from '../../bench/generate-circuit.ts';
import { newCeremonyDir } from '../fixtures/ceremony-fixture.ts';
import { startLockHolder } from '../helpers/lock-holder.ts';

const POWER = 8;
/**
 * The power of the byte-for-byte comparison with the all-snarkjs path: whose preparePhase2 costs
 * grow much faster than the power (about 6 s of CPU at 8, under 1 s at 5). Both paths work in chunks
 * (of 2^16 points, and tasks of 4,096) that no power below 11 fills, so 5 takes the same code paths
 * as POWER; the ptau of POWER is the one the tests below verify and use.
 */
const COMPARED_POWER = 5;
const silent: snarkjs.Logger = { debug() {}, info() {}, warn() {}, error() {} };
let dir: string;
let ptau: string;

before(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'dev-ptau-'));
  ptau = path.join(dir, `dev${POWER}.ptau`);
  await createDevPtau(POWER, ptau);
});

after(async () => {
  await releaseBn128();
  await rm(dir, { recursive: true, force: true });
});

test('same bytes as the all-snarkjs path, and the same bytes on every run', async () => {
  const first = path.join(dir, 'compared.ptau');
  const again = path.join(dir, 'again.ptau');
  const reference = path.join(dir, 'reference.ptau');
  await createDevPtau(COMPARED_POWER, first);
  await createDevPtau(COMPARED_POWER, again);
  await createDevPtauWithSnarkjs(COMPARED_POWER, reference);
  const bytes = await readFile(first);
  assert.ok(bytes.equals(await readFile(again)), 'two runs differ');
  assert.ok(bytes.equals(await readFile(reference)), 'differs from snarkjs newAccumulator + beacon + preparePhase2');
});

test('what a killed run left beside the ptau is removed by the next run to it; a run leaves nothing', async () => {
  const out = path.join(dir, 'after-a-kill.ptau');
  const killed = path.join(dir, '.after-a-kill.ptau.making-4242-0a1b2c');
  await mkdir(killed);
  await writeFile(path.join(killed, 'powers.ptau'), 'the first gigabytes of a ptau');
  await (await startLockHolder(`${killed}.owner`, { note: false })).kill();
  const steps: string[] = [];
  await createDevPtau(POWER, out, (event) => void (event.type === 'step' && steps.push(event.step)));
  assert.ok(steps.includes('removed what 1 killed run left'), steps.join('; '));
  assert.ok((await readFile(out)).equals(await readFile(ptau)));
  assert.deepEqual(
    (await readdir(dir)).filter((name) => name.startsWith('.after-a-kill.ptau')),
    [],
    'neither the killed run’s folder and lock nor this run’s are left',
  );
});

test('snarkjs powersoftau verify accepts it', async () => {
  const verify = (snarkjs.powersOfTau as unknown as { verify(path: string, logger?: snarkjs.Logger): Promise<boolean> })
    .verify;
  assert.equal(await verify(ptau, silent), true);
});

test('marked insecure, prepared for phase 2, of the asked power', async () => {
  assert.deepEqual(await readPtauSummary(ptau), { power: POWER, preparedForPhase2: true, insecure: true });
});

test('zkey new works with it and a proof made with the key verifies', async () => {
  const source = path.join(dir, 'mul100.circom');
  await writeFile(source, multiplicationCircuitSource(100));
  const wasmDir = path.join(dir, 'wasm');
  const r1cs = await compileCircuit(source, dir, { wasmDir });
  const zkey = path.join(dir, 'mul100.zkey');
  await snarkjs.zKey.newZKey(r1cs, ptau, zkey, silent);
  const input = { in: Array.from({ length: 12 }, (_, i) => String(i + 2)) };
  const { proof, publicSignals } = await snarkjs.groth16.fullProve(
    input,
    path.join(wasmDir, 'mul100_js', 'mul100.wasm'),
    zkey,
    silent,
  );
  const vkey = await snarkjs.zKey.exportVerificationKey(zkey, silent);
  assert.equal(await snarkjs.groth16.verify(vkey, publicSignals, proof, silent), true);
  assert.equal(
    await snarkjs.groth16.verify(vkey, ['1', ...publicSignals.slice(1)], proof, silent),
    false,
    'a changed public signal must not verify',
  );
});

test('ceremony init of the project ceremony works with the (cached) development ptau', async () => {
  const ceremony = await newCeremonyDir({ parentDir: dir });
  const circuits = await initCeremony(ceremony);
  assert.equal(circuits.length, 9);
});

test('the Lagrange scalars made chunk by chunk are the ones made in one piece', async () => {
  const curve = await getBn128();
  const Fr = curve.Fr as unknown as { e(v: bigint): Uint8Array };
  const tau = Fr.e(123456789123456789n);
  for (const drop of [false, true]) {
    const whole = lagrangeScalars(curve, tau, 6, 0, 64, drop);
    const pieces: Uint8Array[] = [];
    for (let first = 0; first < 64; first += 7)
      pieces.push(lagrangeScalars(curve, tau, 6, first, Math.min(7, 64 - first), drop));
    assert.ok(Buffer.from(whole).equals(Buffer.concat(pieces)), `chunks differ (last power dropped: ${drop})`);
  }
});
