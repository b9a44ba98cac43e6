/**
 * Where a kernel thread starts. Compiled (dist/), a thread runs its plain JS body
 * (`<stem>-thread-body.js`); from the sources, an entry (`<stem>-thread.mjs`) that loads its
 * TypeScript body itself (core/runtime/source-entry.js), since a worker thread gets no loader of ours
 * (thread-exec-argv.ts). `callerUrl` is the import.meta.url of a module beside the entries.
 */
export function kernelThreadEntry(callerUrl: string, stem: string): URL {
  return new URL(callerUrl.endsWith('.js') ? `./${stem}-thread-body.js` : `./${stem}-thread.mjs`, callerUrl);
}
