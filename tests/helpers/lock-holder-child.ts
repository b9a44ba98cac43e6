/**
 * A child process of the lock tests (tests/helpers/lock-holder.ts starts it):
 *   hold LOCK   takes the data-folder lock, prints `held`, and keeps it until its standard input
 *               closes (then releases it and exits) or it is killed;
 *   hold-bare LOCK  the same with the kernel lock alone, no holder's note (a work folder's owner);
 *   try LOCK    tries the lock once and prints `{"result":"entered"}` or
 *               `{"result":"refused","code":…,"message":…}`.
 * Both print `pid N` first: inside a PID namespace of its own (unshare) N is 1.
 */
import { withCeremonyLock } from '../../core/data-folder/ceremony-lock.ts';
import { tryKernelLock } from '../../core/data-folder/kernel-lock.ts';
import { isCoordinatorError } from '../../core/errors.ts';

const [mode, lockPath] = process.argv.slice(2);
if ((mode !== 'hold' && mode !== 'hold-bare' && mode !== 'try') || !lockPath) {
  process.stderr.write('usage: lock-holder-child.ts hold|hold-bare|try LOCK\n');
  process.exit(2);
}
process.stdout.write(`pid ${process.pid}\n`);

const untilInputEnds = () =>
  new Promise<void>((resolve) => {
    process.stdin.on('end', resolve).on('close', resolve);
    process.stdin.resume();
  });

if (mode === 'hold') {
  await withCeremonyLock(lockPath, async () => {
    process.stdout.write('held\n');
    await untilInputEnds();
  });
} else if (mode === 'hold-bare') {
  const lock = await tryKernelLock(lockPath, { note: false });
  if (!lock) throw new Error('the lock is held');
  process.stdout.write('held\n');
  await untilInputEnds();
  await lock.release();
} else {
  try {
    await withCeremonyLock(lockPath, async () => undefined);
    process.stdout.write(`${JSON.stringify({ result: 'entered' })}\n`);
  } catch (error) {
    if (!isCoordinatorError(error)) throw error;
    process.stdout.write(`${JSON.stringify({ result: 'refused', code: error.code, message: error.message })}\n`);
  }
}
