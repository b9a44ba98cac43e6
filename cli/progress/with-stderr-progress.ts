/**
 * Runs a command's long work with progress rendered on stderr (live lines on a terminal, plain
 * lines otherwise), so stdout stays machine-readable: hashes and results, one a line.
 */
import type { Progress } from '../../core/ceremony/progress.ts';
import { createProgressRenderer } from './progress-renderer.ts';

export async function withStderrProgress<T>(
  work: (progress: Progress) => Promise<T>,
  options: { quiet?: boolean } = {},
): Promise<T> {
  if (options.quiet) return work(() => {});
  const renderer = createProgressRenderer(process.stderr);
  try {
    return await work(renderer.progress);
  } finally {
    renderer.close();
  }
}
