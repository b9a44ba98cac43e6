/**
 * Whether a process of this machine still runs, for leftovers named by their owner's pid (a lock
 * file, a work folder): signal 0 tests without signalling. EPERM means it runs under another user.
 */
export function processIsAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}
