/**
 * The Node flags a worker thread of ours starts with. Compiled (dist/), the parent's own (inherited,
 * as Node does by default). From the sources, the parent's without its preloads (`--import`,
 * `--require`, `--loader`): a kernel thread's entry loads its body itself (scripts/source-entry.js),
 * the hashing thread's body is plain CommonJS, and a preloaded tsx would cost every thread about
 * 0.15 s of CPU for nothing.
 */
const PRELOAD_FLAGS = new Set(['--import', '--require', '-r', '--loader', '--experimental-loader']);

export function threadExecArgv(
  callerUrl: string,
  parentArgv: readonly string[] = process.execArgv,
): string[] | undefined {
  return callerUrl.endsWith('.js') ? undefined : withoutPreloads(parentArgv);
}

/** `argv` without its preload flags and their values, in both forms (`--import x`, `--import=x`). */
export function withoutPreloads(argv: readonly string[]): string[] {
  const kept: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const flag = argv[i]!;
    if (PRELOAD_FLAGS.has(flag))
      i++; // and its value
    else if (!PRELOAD_FLAGS.has(flag.split('=')[0]!)) kept.push(flag);
  }
  return kept;
}
