/**
 * A child process of tests/core/ceremony-lock-race.test.ts: at each of the given moments, tries
 * the data-folder lock of that round and holds it a while. Inside, it creates the round's marker
 * file exclusively and removes it on the way out: a marker already there means two processes were
 * inside at once. Prints one JSON line per round: entered, refused (with the code), or overlap.
 *
 * Arguments: a folder, the first round's start (epoch ms), the rounds, ms between rounds, ms held.
 */
import { open, rm } from 'node:fs/promises';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { withCeremonyLock } from '../../core/data-folder/ceremony-lock.ts';
import { isCoordinatorError } from '../../core/errors.ts';

const [dir, firstStart, rounds, period, hold] = process.argv.slice(2);

async function round(index: number): Promise<Record<string, unknown>> {
  const marker = path.join(dir!, `inside-${index}`);
  try {
    return await withCeremonyLock(path.join(dir!, `lock-${index}`), async () => {
      const handle = await open(marker, 'wx').catch(() => undefined);
      if (!handle) return { round: index, result: 'overlap' };
      await handle.close();
      await sleep(Number(hold));
      await rm(marker);
      return { round: index, result: 'entered' };
    });
  } catch (error) {
    if (isCoordinatorError(error)) return { round: index, result: 'refused', code: error.code };
    return { round: index, result: 'failed', error: String(error) };
  }
}

for (let index = 0; index < Number(rounds); index++) {
  await sleep(Math.max(0, Number(firstStart) + index * Number(period) - Date.now()));
  process.stdout.write(`${JSON.stringify(await round(index))}\n`);
}
