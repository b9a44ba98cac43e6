/**
 * snarkjs's verifyFromInit leaves its ptau file handle for the garbage collector to close, and
 * Node prints a warning each time it does. The warning says nothing useful to a user or a test
 * log, so it is dropped before it is emitted; every other warning goes through unchanged.
 *
 * Plain JavaScript (with a .d.ts beside it) because the test runner preloads it with --import,
 * before any TypeScript loader runs in that process.
 */
const LEAKED_HANDLE_WARNING = /Closing (file descriptor \d+|a FileHandle object) on garbage collection/;

export function silenceSnarkjsHandleWarnings() {
  const emitWarning = process.emitWarning;
  process.emitWarning = function filteredEmitWarning(warning, ...rest) {
    const message = typeof warning === 'string' ? warning : warning?.message;
    if (typeof message === 'string' && LEAKED_HANDLE_WARNING.test(message)) return;
    return emitWarning.call(process, warning, ...rest);
  };
}
