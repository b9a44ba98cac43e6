/**
 * bench/real-ceremony.ts on two of the project's own test circuits (their r1cs, as an operator would
 * give the service's, in a folder of their own; each circuit is one more turn of the same kind): a
 * whole ceremony, init → a page turn per circuit through the shaped link →
 * finalise → publish → audit → the audit again (--audit-again, the ptau remembered) → receipt check,
 * its table printed with every stage and the goals,
 * so the bench cannot rot. It compiles nothing and writes nothing beside the r1cs files.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { copyFile, mkdtemp, readdir, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { PROJECT_DATA_DIR, REPO_ROOT, TWO_CIRCUITS } from '../fixtures/ceremony-fixture.ts';
import { cleanUp } from '../helpers/clean-up.ts';
import { startGroup, stopAllGroups } from '../helpers/process-group.ts';

let circuitsDir: string;

before(async () => {
  circuitsDir = await mkdtemp(path.join(tmpdir(), 'real-ceremony-r1cs-'));
  for (const circuit of TWO_CIRCUITS)
    await copyFile(
      path.join(PROJECT_DATA_DIR, 'circuits', `${circuit}.r1cs`),
      path.join(circuitsDir, `${circuit}.r1cs`),
    );
});

after(async () => {
  await stopAllGroups();
  await cleanUp(circuitsDir);
});

test('real-ceremony runs a whole ceremony of the test circuits and prints every stage against its floor', async () => {
  const filesBefore = (await readdir(circuitsDir)).sort();
  const bench = startGroup(
    process.execPath,
    ['--import', 'tsx', path.join(REPO_ROOT, 'bench', 'real-ceremony.ts'), '--r1cs', circuitsDir, '--audit-again'],
    { cwd: REPO_ROOT, env: process.env, label: 'bench/real-ceremony.ts' },
  );
  const timer = setTimeout(() => void bench.stop('SIGTERM'), 10 * 60_000);
  const { code } = await bench.exited.finally(() => clearTimeout(timer));
  const output = bench.output();
  assert.equal(code, 0, output);
  const stages = ['init', 'serve: contribution 0 combined', 'finalise', 'publish', 'audit', 'receipt check'];
  // --audit-again: the same audit on the memo of the ptau the first verified, against the first.
  assert.match(output, /^audit again \(ptau remembered\)\s+\d+\.\d+ s/m);
  assert.match(output, /^ {2}audit again \(ptau remembered\): .*\(\d+\.\d\d × the first audit\)$/m);
  assert.match(output, /a second audit, the ptau remembered, ≤ 0\.5 × the first/);
  // The audit against its own floor: the work it counted, priced in the same run (bench/audit-floor.ts).
  assert.match(output, /^audit\s+\d+\.\d+ s\s+\d+\.\d+ s\s+\d+\.\d+×/m);
  assert.match(output, /the audit ≤ 1\.3 × its own floor/);
  for (const stage of [...stages, 'coordinator (serve) over the turns'])
    assert.match(output, new RegExp(`^${stage.replace(/[()]/g, '\\$&')}\\s+\\d+\\.\\d+ s`, 'm'), `the ${stage} row`);
  for (const circuit of TWO_CIRCUITS)
    assert.match(
      output,
      new RegExp(`^turn ${circuit}, page shaped\\s+\\d+\\.\\d+ s\\s+\\d+\\.\\d+ s\\s+\\d+\\.\\d+×`, 'm'),
    );
  // The one page contributed to every circuit: its row says where the session's CPU went (the page
  // and the coordinator both worked, neither above the whole machine), against all the turns' floors.
  const pageRow = /CPU over the session (\d+\.\d) s of (\d+) × .*? the compute floor is (\d+\.\d) s of CPU/.exec(
    output,
  );
  const split = /: page (\d+\.\d) s, coordinator (\d+\.\d) s/.exec(pageRow?.[0] ?? '');
  assert.ok(pageRow && split, "the page row splits the session's CPU");
  const [machine, cores, floorCpu] = pageRow.slice(1).map(Number) as [number, number, number];
  const [page, coordinator] = split.slice(1).map(Number) as [number, number];
  assert.ok(page > 0 && coordinator > 0, `the page (${page} s) and the coordinator (${coordinator} s) both used CPU`);
  assert.ok(page + coordinator <= machine + 0.5, `page and coordinator within the machine's ${machine} s`);
  // The page's CPU by thread adds up to the page's (read from its threads rather than its
  // processes, at the same half-second samples), and names the kernel's Web Workers; so does the
  // coordinator's, naming its HTTP process's main thread (the intake's splice and hashes).
  const pageRowLine = output.split('\n').find((line) => line.includes(pageRow[0])) ?? '';
  // `used`: its CPU is above 0.0 s. The page's Web Workers are only required to be seen: on the test
  // circuits their whole pass can fall between two half-second samples, and its CPU then counts as
  // "threads ended unsampled".
  const threadsOf = (who: string, total: number, named: string, used: boolean): void => {
    const list = new RegExp(`the ${who}'s CPU by thread: ([^;)]*)`).exec(pageRowLine)?.[1] ?? '';
    const groups = [...list.matchAll(/([^,]+?) (\d+\.\d) s(?:,|$)/g)].map((m) => [m[1]!.trim(), Number(m[2])] as const);
    const sum = groups.reduce((acc, [, seconds]) => acc + seconds, 0);
    assert.ok(Math.abs(sum - total) <= 0.05 * total + 0.5, `the ${who}'s threads (${list}) add up to its ${total} s`);
    assert.ok(
      groups.some(([group, seconds]) => group === named && (!used || seconds > 0)),
      `${named} is among the ${who}'s threads: ${list}`,
    );
  };
  threadsOf('page', page, 'renderer DedicatedWorker', false);
  threadsOf('coordinator', coordinator, 'ceremony.js main', true);
  // The compute floor is the faster of its two measurements (before the turns, after finalise): a
  // floor taken in one of the host's slow spells would flatter every stage set against it.
  const moment = '(before the turns|after finalise)';
  const measured = [
    ...output.matchAll(
      new RegExp(
        String.raw`at (\d+\.\d) µs a point \(the faster of two measurements, ${moment}; (\d+\.\d) ${moment}\)`,
        'g',
      ),
    ),
  ];
  assert.ok(measured.length >= TWO_CIRCUITS.length, `every turn's floor names its two measurements`);
  for (const [, rate, when, other, otherWhen] of measured) {
    assert.notEqual(when, otherWhen);
    assert.ok(Number(rate) <= Number(other), `the floor's ${rate} µs a point is the faster of it and ${other}`);
  }
  const turnFloors = [...output.matchAll(/^ {2}turn \S+, page shaped: \w+ \(compute (\d+\.\d+) s/gm)];
  assert.equal(turnFloors.length, TWO_CIRCUITS.length, 'each turn prints its compute floor');
  const sessionFloor = turnFloors.reduce((sum, match) => sum + Number(match[1]), 0) * cores;
  // Each printed figure is rounded to its last digit (a turn's floor to 0.01 s or 0.1 s).
  const halfDigit = (figure: string): number => 0.5 * 10 ** -(figure.split('.')[1]?.length ?? 0);
  const rounding = turnFloors.reduce((sum, match) => sum + halfDigit(match[1]!), 0) * cores + 0.05;
  assert.ok(
    Math.abs(floorCpu - sessionFloor) <= rounding,
    `the session's CPU floor ${floorCpu} s is its turns' floors × ${cores} cores (${sessionFloor.toFixed(2)} s)`,
  );
  // The kernel probe read the machine's speed over the page's session (each turn's row) and over
  // finalise, at their start and end at least, and set it against its reading at the floor.
  const probeNote = new RegExp(
    String.raw`read (\d+\.\d) µs a point \(mean of (\d+), [^)]*\) against (\d+\.\d) ` +
      String.raw`when the floor was taken: the machine ran the kernel (\d+\.\d\d)× as slow`,
    'g',
  );
  const probes = [...output.matchAll(probeNote)];
  assert.equal(probes.length, TWO_CIRCUITS.length + 1, 'every turn and finalise name the probe');
  for (const [, during, count, atFloor, slowdown] of probes) {
    assert.ok(Number(count) >= 2, `at least the readings at the start and the end (${count})`);
    assert.ok(Math.abs(Number(during) / Number(atFloor) - Number(slowdown)) <= 0.01, 'the slowdown is their ratio');
  }
  const worst = new RegExp(
    String.raw`each turn ≤ 1\.3 × its floor: worst (turn \S+, page shaped): (\d+\.\d\d)× \((\d+\.\d\d)× of the floor ` +
      String.raw`at the machine's speed during it, (\d+\.\d+) s: its compute slowed (\d+\.\d\d)×`,
  ).exec(output);
  assert.ok(worst, 'the turn goal gives the ratio against the floor at the machine’s speed beside the raw one');
  const stage = worst[1]!;
  const [raw, atSpeed, floorAtSpeed, slower] = worst.slice(2) as [string, string, string, string];
  const row = new RegExp(String.raw`^${stage}\s+(\d+\.\d+) s\s+(\d+\.\d+) s`, 'm').exec(output);
  const parts = new RegExp(
    String.raw`^ {2}${stage}: \w+ \(compute (\d+\.\d+) s at .*?, download (\d+\.\d+) s, upload (\d+\.\d+) s`,
    'm',
  ).exec(output);
  assert.ok(row && parts, `the worst turn's row and floor line (${stage})`);
  const [time, floor] = row.slice(1) as [string, string];
  const [compute, download, upload] = parts.slice(1) as [string, string, string];
  // Every figure is printed rounded to its last digit, so each is checked as the interval it stands for
  // (the test circuits' floors are hundredths of a second).
  type Interval = [number, number];
  const printed = (figure: string): Interval => [
    Number(figure) - halfDigit(figure),
    Number(figure) + halfDigit(figure),
  ];
  const quotient = ([a0, a1]: Interval, [b0, b1]: Interval): Interval => [a0 / b1, a1 / Math.max(b0, 1e-9)];
  const largest = (...all: Interval[]): Interval => [
    Math.max(...all.map((i) => i[0])),
    Math.max(...all.map((i) => i[1])),
  ];
  const agrees = (figure: string, [lo, hi]: Interval): boolean => printed(figure)[1] >= lo && printed(figure)[0] <= hi;
  assert.ok(agrees(raw, quotient(printed(time), printed(floor))), `${raw}× is ${time} s ÷ ${floor} s`);
  // Only the compute part of the floor moves with the machine: the transfers' rates are the link's.
  const slowed: Interval = [printed(compute)[0] * printed(slower)[0], printed(compute)[1] * printed(slower)[1]];
  assert.ok(
    agrees(floorAtSpeed, largest(slowed, printed(download), printed(upload))),
    `the floor at the machine's speed, ${floorAtSpeed} s, is max(${compute} × ${slower}, ${download}, ${upload})`,
  );
  assert.ok(
    agrees(atSpeed, quotient(printed(time), printed(floorAtSpeed))),
    `${atSpeed}× is ${time} s ÷ ${floorAtSpeed} s`,
  );
  assert.match(output, /^goals \(a whole ceremony on one machine\):$/m);
  assert.equal(
    output.match(/^ {2}(met {4}|NOT MET) {2}/gm)?.length,
    7,
    'seven goals checked (the audit against its floor the sixth, the second audit the seventh)',
  );
  assert.match(output, /no process above 4 GB RSS: largest \S/);
  assert.deepEqual((await readdir(circuitsDir)).sort(), filesBefore, 'nothing written beside the r1cs files');
  for (const file of ['real-ceremony.ts', 'whole-ceremony.ts']) {
    const source = await readFile(path.join(REPO_ROOT, 'bench', file), 'utf8');
    assert.doesNotMatch(source, /compile-circuit|circom2|generate-circuit/, `${file} compiles nothing`);
  }
});
