/**
 * The data-folder lock across processes: several processes started at the same instant on a lock
 * whose holder was killed (or on a new one) never run inside it together, and one of them gets in.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { startLockHolder } from '../helpers/lock-holder.ts';

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

test('processes racing for a lock, new or left by a killed holder: exactly one inside at a time', async (t) => {
  const dir = await mkdtemp(path.join(tmpdir(), 'ceremony-lock-race-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  // Even rounds start on the lock of a holder killed with kill -9 (its file and note left), odd rounds on none.
  for (let round = 0; round < ROUNDS; round += 2) await (await startLockHolder(path.join(dir, `lock-${round}`))).kill();
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
