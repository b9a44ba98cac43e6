/**
 * checkPtauSections accepts the development ptau (byte for byte what snarkjs's preparePhase2
 * writes, the truncated level P+1 included) and a ptau prepared by snarkjs itself, and refuses,
 * naming the section, a copy with one point changed in any part the check of contribution 0 relies
 * on: a Lagrange point of a circuit's level (12), an odd point of an H level, a power of τ, β2, a
 * point off the curve. A point the key never uses (an even point of an H level) is not a refusal,
 * nor is a changed α·λ or β·λ point (14, 15) or α·τ, β·τ power (4, 5): the check is about what the
 * audit relies on. Its `alpha-beta` scope, which names the ptau when contribution 0 fails, refuses
 * those. A circuit of 2^15 passes too, its largest transforms on threads (from 2^16): a wrong
 * coefficient would fail the check.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { copyFile, mkdtemp, open, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { CurveGroup } from 'ffjavascript';
import { checkPtauSections, type PtauCheckScope } from '../../core/audit/check-ptau-sections.ts';
import { readSectionTable } from '../../core/binfile/section-table.ts';
import { getBn128, releaseBn128 } from '../../core/crypto/bn128.ts';
import { closeMultiExp } from '../../core/kernel/multi-exp.ts';
import { devPtau } from '../fixtures/ceremony-fixture.ts';
import { snarkjsPtau } from '../helpers/snarkjs-ptau.ts';

let scratch: string;
let ptau: string;
let copies = 0;

before(async () => {
  scratch = await mkdtemp(path.join(tmpdir(), 'check-ptau-sections-'));
  ptau = await devPtau(10);
});

after(async () => {
  await rm(scratch, { recursive: true, force: true });
  await closeMultiExp();
  await releaseBn128();
});

/**
 * A copy of the dev ptau with point `index` of `section` (from the section's start) doubled, or a byte of it flipped.
 */
async function forged(section: number, index: number, how: 'double' | 'off-curve' = 'double'): Promise<string> {
  const target = path.join(scratch, `forged-${copies++}.ptau`);
  await copyFile(ptau, target);
  const bytes = await readFile(target);
  const handle = await open(target, 'r');
  const location = (await readSectionTable(handle, bytes.length, 'ptau')).sections.get(section)!;
  await handle.close();
  const curve = await getBn128();
  const G = (section === 3 || section === 6 ? curve.G2 : curve.G1) as CurveGroup;
  const size = section === 3 || section === 6 ? 128 : 64;
  const at = location.offset + index * size;
  if (how === 'off-curve') {
    bytes[at + 5]! ^= 0x01;
  } else {
    const point = G.fromRprLEM(bytes, at);
    const doubled = new Uint8Array(size);
    G.toRprLEM(doubled, 0, G.toAffine(G.add(point, point)));
    bytes.set(doubled, at);
  }
  await writeFile(target, bytes);
  return target;
}

async function assertRefused(
  file: string,
  powers: number[],
  why: RegExp,
  scope: PtauCheckScope = 'relied-on',
): Promise<void> {
  await assert.rejects(checkPtauSections(file, powers, { scope }), (error: Error & { code?: string }) => {
    assert.equal(error.code, 'audit.ptau_inconsistent', error.message);
    assert.match(error.message, why);
    return true;
  });
}

/** Index, from section 12's (14's, 15's) start, of point i of level k (levels 2^0, 2^1, … back to back). */
const levelPoint = (k: number, i: number): number => 2 ** k - 1 + i;

test('the development ptau passes, every level the circuits use (the truncated 2^11 H level included)', async () => {
  const report = await checkPtauSections(ptau, [10, 9, 5]);
  assert.equal(report.power, 10);
  assert.ok(
    report.checked.includes('section 12 (λ) at 2^11, odd points (H) against section 2'),
    report.checked.join('\n'),
  );
  assert.ok(report.checked.includes('section 2: 2047 successive powers of τ'));
  assert.ok(!report.checked.some((line) => /section (4|5|14|15)\b/.test(line)), report.checked.join('\n'));
  const alphaBeta = await checkPtauSections(ptau, [10, 9, 5], { scope: 'alpha-beta' });
  assert.ok(alphaBeta.checked.includes('section 15 (β·λ) at 2^5 against section 5'), alphaBeta.checked.join('\n'));
  assert.ok(alphaBeta.checked.includes('section 4: 1024 successive powers of τ times α'));
  assert.ok(!alphaBeta.checked.some((line) => /section (2|12)\b/.test(line)), alphaBeta.checked.join('\n'));
});

test('a circuit of 2^15 passes: its transforms of 2^16 run on threads of their own, beside the others', async () => {
  const report = await checkPtauSections(await devPtau(15), [15, 14]);
  assert.equal(report.power, 15);
  assert.ok(
    report.checked.includes('section 12 (λ) at 2^16, odd points (H) against section 2'),
    report.checked.join('\n'),
  );
});

test('a ptau prepared by snarkjs itself (powersoftau new, beacon, prepare phase2) passes', async () => {
  const prepared = await snarkjsPtau(scratch, 'test', 6);
  const report = await checkPtauSections(prepared, [6, 4]);
  assert.equal(report.power, 6);
});

test("a changed Lagrange point of a circuit's level is refused, naming section 12 and the level", async () => {
  await assertRefused(
    await forged(12, levelPoint(9, 5)),
    [9],
    /section 12 \(λ\) at 2\^9 against section 2: not its Lagrange basis/,
  );
});

test('a changed odd point of an H level is refused; an even one, which no key uses, is not', async () => {
  await assertRefused(
    await forged(12, levelPoint(10, 7)),
    [9],
    /section 12 \(λ\) at 2\^10, odd points \(H\) against section 2: not its Lagrange basis/,
  );
  await checkPtauSections(await forged(12, levelPoint(10, 6)), [9]);
});

test(
  'changed α·λ and β·λ points pass by default (no verdict rests on them); ' + 'the alpha-beta scope refuses them',
  async () => {
    const alphaLambda = await forged(14, levelPoint(9, 300));
    const betaLambda = await forged(15, levelPoint(9, 0));
    await checkPtauSections(alphaLambda, [9]);
    await checkPtauSections(betaLambda, [9]);
    await assertRefused(alphaLambda, [9], /section 14 \(α·λ\) at 2\^9 against section 4/, 'alpha-beta');
    await assertRefused(betaLambda, [9], /section 15 \(β·λ\) at 2\^9 against section 5/, 'alpha-beta');
  },
);

test('a changed power of τ is refused; of α·τ or β·τ, only by the alpha-beta scope', async () => {
  await assertRefused(await forged(2, 100), [9], /section 2 does not hold successive powers of τ/);
  const alphaTau = await forged(4, 3);
  const betaTau = await forged(5, 511);
  await checkPtauSections(alphaTau, [9]);
  await assertRefused(alphaTau, [9], /section 4 does not hold successive powers of τ times α/, 'alpha-beta');
  await assertRefused(betaTau, [9], /section 5 does not hold successive powers of τ times β/, 'alpha-beta');
});

test(
  "β2 not carrying β1's β, a first power that is not the generator, and " + 'a point off the curve are refused',
  async () => {
    await assertRefused(await forged(6, 0), [9], /β1 \(section 5\) and β2 \(section 6\) do not carry the same β/);
    await assertRefused(await forged(2, 0), [9], /section 2 does not start with the generator of G1/);
    await assertRefused(
      await forged(12, levelPoint(9, 17), 'off-curve'),
      [9],
      /point 17 of section 12 at 2\^9 is not a point of the curve/,
    );
  },
);
