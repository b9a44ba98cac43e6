/**
 * The kernel's G1 MSM (g1-msm.c, one thread, and g1MultiExp on the thread pool) against
 * ffjavascript's multiExpAffine: the cases of tests/helpers/msm-cases.ts (random inputs of several
 * sizes, the bucket tree's odd counts and the split across threads, with 8- and 32-byte scalars;
 * points at infinity, zero scalars, repeated points, P with −P, r−1, identity sums), and what is
 * G1's alone here: the window choice, callers' Buffers, and a process that used g1MultiExp exits
 * without closing it.
 */
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { msmWindowBits, scalarBitLength } from '../../core/kernel/msm-kernel.ts';
import { g1MultiExp, g1MultiExpOrFallback } from '../../core/kernel/multi-exp.ts';
import { REPO_ROOT } from '../fixtures/ceremony-fixture.ts';
import { defineMsmCases, msmSuite, randomScalars } from '../helpers/msm-cases.ts';

const g1 = msmSuite('G1');

describe('G1 MSM kernel', () => {
  defineMsmCases({
    widths: [8, 32],
    sizes: [1, 2, 3, 17, 8191, 8193, 10_000],
    repeated: 9000,
    suite: g1,
    multiExp: g1MultiExp,
    multiExpOrFallback: g1MultiExpOrFallback,
  });

  it('sizes its windows from the scalars actually given', () => {
    const scalars = new Uint8Array(64);
    assert.equal(scalarBitLength(scalars, 32), 0);
    scalars[32 + 3] = 0x05;
    assert.equal(scalarBitLength(scalars, 32), 27);
    scalars[31] = 0x30;
    assert.equal(scalarBitLength(scalars, 32), 254);
    assert.ok(msmWindowBits(1 << 16, 64) > msmWindowBits(64, 64));
  });

  it("leaves a caller's Buffer usable (its slices are views: they must be copied, not transferred)", async () => {
    const n = 9000;
    const bases = Buffer.from(g1.randomBases(n));
    const scalars = Buffer.from(randomScalars(n, 8));
    const before = Buffer.from(bases);
    const expected = await g1.G.multiExpAffine(new Uint8Array(bases), new Uint8Array(scalars));
    assert.ok(g1.samePoint(await g1MultiExp(bases, scalars, 8), expected));
    assert.equal(bases.byteLength, n * 64);
    assert.deepEqual(bases, before);
  });

  it('lets a process that used it exit without closing it', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'g1-msm-exit-'));
    const script = path.join(dir, 'use-msm.mts');
    const moduleUrl = (relative: string): string => pathToFileURL(path.join(REPO_ROOT, relative)).href;
    writeFileSync(
      script,
      [
        `const { g1MultiExp } = await import('${moduleUrl('core/kernel/multi-exp.ts')}');`,
        `const { releaseBn128 } = await import('${moduleUrl('core/crypto/bn128.ts')}');`,
        'const p = await g1MultiExp(new Uint8Array(64), new Uint8Array(8), 8);',
        'await releaseBn128();',
        "console.log('summed', p.length);",
      ].join('\n'),
    );
    after(() => rmSync(dir, { recursive: true, force: true }));
    const child = spawn(process.execPath, ['--import', 'tsx', script], {
      cwd: REPO_ROOT,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (d: Buffer) => (output += d.toString()));
    child.stderr.on('data', (d: Buffer) => (output += d.toString()));
    // Bounded wait: a process kept alive by the threads is killed and fails the test.
    const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
    const [code, signal] = await new Promise<[number | null, NodeJS.Signals | null]>((resolve) =>
      child.once('exit', (c, s) => resolve([c, s])),
    );
    clearTimeout(timer);
    assert.equal(signal, null, `the process had to be killed; output:\n${output}`);
    assert.equal(code, 0, output);
    assert.match(output, /summed 96/);
  });
});
