/**
 * Progress of long work: core emits structured events (snarkjs's own counts parsed, not guessed),
 * the CLI renders them as a live line with percentage, rate and ETA on a terminal and as plain
 * lines (steps, "done in") anywhere else.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { rm } from 'node:fs/promises';
import { newCeremonyDir } from '../fixtures/ceremony-fixture.ts';
import { runCli } from '../helpers/run-cli.ts';
import { contributeLocally } from '../../core/ceremony/extend-chain.ts';
import { parseSnarkjsCount, type ProgressEvent } from '../../core/ceremony/progress.ts';
import { releaseBn128 } from '../../core/crypto/bn128.ts';
import { loadCeremonyConfig } from '../../core/config/ceremony-config.ts';
import { createProgressRenderer, type ProgressStream } from '../../cli/progress/progress-renderer.ts';

let dataDir: string;

before(async () => {
  dataDir = await newCeremonyDir();
});

after(async () => {
  await releaseBn128();
  await rm(dataDir, { recursive: true, force: true });
});

function fakeStream(isTTY: boolean): ProgressStream & { output: string } {
  const stream = { isTTY, columns: 120, output: '', write: (chunk: string) => (stream.output += chunk) };
  return stream;
}

test('on a terminal the live line shows the stage with percentage, rate and ETA, redrawn in place', () => {
  let clock = 0;
  const stream = fakeStream(true);
  const { progress, close } = createProgressRenderer(stream, { now: () => clock, redrawIntervalMs: 0 });
  progress({ type: 'step', circuit: 'register', step: 'verifying contribution 1 of 2' });
  progress({ type: 'count', circuit: 'register', part: 'Same ratio check L section', done: 0, total: 4000 });
  clock = 2000;
  progress({ type: 'count', circuit: 'register', part: 'Same ratio check L section', done: 1000, total: 4000 });
  const live = stream.output.split('\r\x1b[2K').at(-1)!;
  assert.match(
    live,
    /^register: verifying contribution 1 of 2 · Same ratio check L section 25% · 500\/s · ETA 6\.0 s\s+\(2\.0 s\)$/,
  );
  assert.doesNotMatch(stream.output, /\n/, 'the line is redrawn in place, not repeated');
  clock = 3500;
  progress({ type: 'finished', circuit: 'register' });
  assert.match(stream.output, /\r\x1b\[2Kregister: done in 3\.5 s\n$/);
  progress({ type: 'step', circuit: 'treeUpdate', step: 'rebuilding contribution 0' });
  close();
  assert.match(
    stream.output,
    /treeUpdate: rebuilding contribution 0\s+\(0\.0 s\)\n$/,
    'close() keeps the last live line',
  );
});

test('a note is written above the live line, which is drawn again; without a terminal it is a plain line', () => {
  let clock = 0;
  const terminal = fakeStream(true);
  const live = createProgressRenderer(terminal, { now: () => clock, redrawIntervalMs: 0 });
  live.progress({ type: 'step', circuit: 'register', step: 'waiting: 2nd in line' });
  clock = 1000;
  live.note('register: refused, back in the queue');
  assert.match(
    terminal.output,
    /\r\x1b\[2Kregister: refused, back in the queue\n\r\x1b\[2Kregister: waiting: 2nd in line\s+\(1\.0 s\)$/,
  );
  const plain = fakeStream(false);
  const lines = createProgressRenderer(plain, { now: () => clock });
  lines.note('signed in as alice');
  assert.equal(plain.output, 'signed in as alice\n');
});

test('without a terminal: plain lines for steps and "done in", a progress line only when a stage runs long', () => {
  let clock = 0;
  const stream = fakeStream(false);
  const { progress } = createProgressRenderer(stream, { now: () => clock, plainIntervalMs: 30_000 });
  progress({ type: 'step', circuit: 'register', step: 'creating contribution 0' });
  progress({ type: 'count', circuit: 'register', part: 'processing constraints', done: 0, total: 100 });
  clock = 10_000;
  progress({ type: 'count', circuit: 'register', part: 'processing constraints', done: 10, total: 100 });
  assert.equal(stream.output, '… register: creating contribution 0\n', 'no count line before the interval');
  clock = 30_000;
  progress({ type: 'count', circuit: 'register', part: 'processing constraints', done: 30, total: 100 });
  clock = 31_000;
  progress({ type: 'finished', circuit: 'register' });
  assert.deepEqual(stream.output.split('\n'), [
    '… register: creating contribution 0',
    '… register: processing constraints 30% (1.0/s, ETA 1m10s)',
    '… register: done in 31.0 s',
    '',
  ]);
  assert.doesNotMatch(stream.output, /\x1b|\r/);
});

test("snarkjs's counted debug messages become done/total", () => {
  assert.deepEqual(parseSnarkjsCount('c', 'Applying key: L Section: 1000/262144'), {
    type: 'count',
    circuit: 'c',
    part: 'Applying key: L Section',
    done: 1000,
    total: 262144,
  });
  assert.deepEqual(parseSnarkjsCount('c', 'H Verification(tau):  0/1024'), {
    type: 'count',
    circuit: 'c',
    part: 'H Verification(tau)',
    done: 0,
    total: 1024,
  });
  assert.deepEqual(parseSnarkjsCount('c', 'Multiexp start: Same ratio check L: 4096/8192'), {
    type: 'count',
    circuit: 'c',
    part: 'Multiexp start: Same ratio check L',
    done: 4096,
    total: 8192,
  });
  assert.equal(parseSnarkjsCount('c', 'Reading r1cs'), undefined);
});

test(
  '`ceremony init` without a terminal prints a start and a "done in" ' + 'line per circuit, and no terminal codes',
  async () => {
    const result = await runCli(['init', '--data', dataDir]);
    assert.equal(result.code, 0, result.stderr);
    const config = await loadCeremonyConfig(dataDir);
    for (const circuit of config.circuits) {
      assert.match(
        result.stderr,
        new RegExp(`^… ${circuit.name}: creating contribution 0 \\(\\d+ constraints\\)$`, 'm'),
      );
      assert.match(result.stderr, new RegExp(`^… ${circuit.name}: done in \\d+\\.\\d s$`, 'm'));
    }
    assert.doesNotMatch(result.stderr, /\x1b|\r/);
    assert.equal(result.stdout.trim().split('\n').length, config.circuits.length, 'stdout keeps one result a line');
  },
);

test('a real contribution reports its steps and the points of L and H scaled', async () => {
  const events: ProgressEvent[] = [];
  await contributeLocally(dataDir, 'register', 'progress-test', (event) => events.push(event));
  const steps = events.filter((e) => e.type === 'step').map((e) => (e as { step: string }).step);
  assert.deepEqual(steps, ['contributing to contribution 0', 'verifying contribution 1']);
  const counts = events.filter((e): e is Extract<ProgressEvent, { type: 'count' }> => e.type === 'count');
  assert.ok(
    counts.some((e) => e.part === 'L and H scaled' && e.total > 0),
    JSON.stringify(counts),
  );
  assert.ok(counts.every((e) => e.circuit === 'register' && e.done <= e.total));
  assert.deepEqual(events.at(-1), { type: 'finished', circuit: 'register' });
});
