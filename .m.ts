import { readFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { readZkeyInfo, SECTION } from './core/zkey/zkey-file.ts';
import { g1MultiExp, closeG1MultiExp, startG1MultiExpThreads } from './core/kernel/g1-multi-exp.ts';
import { getBn128, releaseBn128 } from './core/crypto/bn128.ts';
const D = '/work/fixture-cache/bench-real-shaped-rs18/';
startG1MultiExpThreads(); await getBn128();
const parts: Uint8Array[] = [];
for (const f of ['z1.zkey', 'z2.zkey']) {
  const info = await readZkeyInfo(D + f); const bytes = readFileSync(D + f);
  for (const id of [SECTION.l, SECTION.h]) { const s = info.sections.get(id)!; parts.push(new Uint8Array(bytes.subarray(s.offset, s.offset + s.size))); }
}
for (let round = 0; round < 3; round++) {
  let t = performance.now();
  await Promise.all(parts.map((p) => g1MultiExp(p, new Uint8Array(randomBytes(p.length / 8)), 8)));
  const a = performance.now() - t;
  t = performance.now();
  for (const p of parts) await g1MultiExp(p, new Uint8Array(randomBytes(p.length / 8)), 8);
  console.log(`round ${round}: 4 section MSMs concurrently ${a.toFixed(0)} ms, one after another ${(performance.now() - t).toFixed(0)} ms`);
}
await closeG1MultiExp(); await releaseBn128();
