/**
 * The Node flags a worker thread of ours starts with. Compiled (dist/), the parent's own (inherited,
 * as Node does by default). From the sources, none: a kernel thread's entry loads its body itself
 * (core/runtime/source-entry.js) and the hashing thread's body is plain CommonJS, so a preloaded tsx
 * would cost every thread about 0.15 s of CPU for nothing. None rather than the parent's minus its
 * preloads: a process that node's test runner starts carries flags that a worker refuses
 * (ERR_WORKER_INVALID_EXEC_ARGV on Node 24: `--stack-trace-limit`, `--secure-heap`, …).
 */
export function threadExecArgv(callerUrl: string): string[] | undefined {
  return callerUrl.endsWith('.js') ? undefined : [];
}
