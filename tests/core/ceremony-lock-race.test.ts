/**
 * The data-folder lock across processes: several processes started at the same instant on a lock
 * left by a dead process (or on none) never run inside it together, and one of them gets in.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';

const RACERS = 6;
const ROUNDS = 6;
const PERIOD_MS = 700;
const HOLD_MS = 150;
const racer = path.join(import.meta.dirname, '..', 'helpers', 'lock-racer.ts');

function runRacer(dir: string, firstStart: number): Promise<Array<{ round: number; result: string; code?: string }>> {
  return new Promise((resolve, reject) => {
    const child = spawn(
      process.execPath,
      ['--import', 'tsx', racer, dir, String(firstStart), String(ROUNDS), String(PERIOD_MS), String(HOLD_MS)],
      { stdio: ['ignore', 'pipe', 'inherit'] },
    );
    let out = '';
    child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
    child.on('error', reject);
    child.on('close', (code) => {
      if (code !== 0) reject(new Error(`a racer exited with ${code}`));
      else
        resolve(
          out
            .trim()
            .split('\n')
            .map((line) => JSON.parse(line)),
        );
    });
  });
}

test('processes racing for a stale or free lock: exactly one inside at a time', async (t) => {
  const dir = await mkdtemp(path.join(tmpdir(), 'ceremony-lock-race-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  // A pid that was alive a moment ago and is not any more: what a kill -9 leaves in the lock.
  const deadPid = spawnSync(process.execPath, ['-e', '']).pid;
  // Even rounds start on a stale lock, odd rounds on none.
  for (let round = 0; round < ROUNDS; round += 2) await writeFile(path.join(dir, `lock-${round}`), String(deadPid));
  // Far enough ahead for every racer to have started (tsx included) on a busy machine.
  const firstStart = Date.now() + 4000;
  const results = (await Promise.all(Array.from({ length: RACERS }, () => runRacer(dir, firstStart)))).flat();

  assert.deepEqual(
    results.filter((r) => r.result === 'overlap' || r.result === 'failed'),
    [],
    'never two inside at once, nothing but refusals',
  );
  for (let round = 0; round < ROUNDS; round++) {
    const ofRound = results.filter((r) => r.round === round);
    assert.equal(ofRound.length, RACERS);
    assert.ok(
      ofRound.some((r) => r.result === 'entered'),
      `round ${round}: someone got in`,
    );
    for (const r of ofRound) if (r.result === 'refused') assert.equal(r.code, 'ceremony.locked');
  }
});
