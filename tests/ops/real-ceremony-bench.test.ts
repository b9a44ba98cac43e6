/**
 * bench/real-ceremony.ts on the project's own test circuits (their r1cs, as an operator would give
 * the service's): a whole ceremony, init → a page turn per circuit through the shaped link →
 * finalise → publish → audit → receipt check, its table printed with every stage and the goals,
 * so the bench cannot rot. It compiles nothing and writes nothing beside the r1cs files.
 */
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { PROJECT_CIRCUITS, PROJECT_DATA_DIR, REPO_ROOT } from '../fixtures/ceremony-fixture.ts';
import { startGroup, stopAllGroups } from '../helpers/process-group.ts';

after(stopAllGroups);

test('real-ceremony runs a whole ceremony of the test circuits and prints every stage against its floor', async () => {
  const circuitsDir = path.join(PROJECT_DATA_DIR, 'circuits');
  const before = (await readdir(circuitsDir)).sort();
  const bench = startGroup(
    process.execPath,
    ['--import', 'tsx', path.join(REPO_ROOT, 'bench', 'real-ceremony.ts'), '--r1cs', circuitsDir],
    { cwd: REPO_ROOT, env: process.env, label: 'bench/real-ceremony.ts' },
  );
  const timer = setTimeout(() => void bench.stop('SIGTERM'), 10 * 60_000);
  const { code } = await bench.exited.finally(() => clearTimeout(timer));
  const output = bench.output();
  assert.equal(code, 0, output);
  const stages = ['init', 'serve: contribution 0 combined', 'finalise', 'publish', 'audit', 'receipt check'];
  for (const stage of [...stages, 'coordinator (serve) over the turns'])
    assert.match(output, new RegExp(`^${stage.replace(/[()]/g, '\\$&')}\\s+\\d+\\.\\d+ s`, 'm'), `the ${stage} row`);
  for (const circuit of PROJECT_CIRCUITS)
    assert.match(
      output,
      new RegExp(`^turn ${circuit}, page shaped\\s+\\d+\\.\\d+ s\\s+\\d+\\.\\d+ s\\s+\\d+\\.\\d+×`, 'm'),
    );
  // Each page row says where the turn's CPU went: the page and the coordinator both worked, and
  // neither used more than the whole machine did.
  const cpuSplit =
    /CPU over (?:it|the session) (\d+\.\d) s of \d+ × \d+\.\d s: page (\d+\.\d) s, coordinator (\d+\.\d) s/;
  const split = cpuSplit.exec(output);
  assert.ok(split, 'a page row splits its CPU');
  const [machine, page, coordinator] = split.slice(1).map(Number) as [number, number, number];
  assert.ok(page > 0 && coordinator > 0, `the page (${page} s) and the coordinator (${coordinator} s) both used CPU`);
  assert.ok(page + coordinator <= machine + 0.5, `page and coordinator within the machine's ${machine} s`);
  assert.match(output, /^goals \(a whole ceremony on one machine\):$/m);
  assert.equal(output.match(/^ {2}(met {4}|NOT MET) {2}/gm)?.length, 5, 'five goals checked');
  assert.match(output, /no process above 4 GB RSS: largest \S/);
  assert.deepEqual((await readdir(circuitsDir)).sort(), before, 'nothing written beside the r1cs files');
  for (const file of ['real-ceremony.ts', 'whole-ceremony.ts']) {
    const source = await readFile(path.join(REPO_ROOT, 'bench', file), 'utf8');
    assert.doesNotMatch(source, /compile-circuit|circom2|generate-circuit/, `${file} compiles nothing`);
  }
});
