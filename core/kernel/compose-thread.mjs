// Entry of a Node compose thread run from the sources: worker threads do not inherit the parent's tsx
// hooks, so the thread loads its body itself, compiled when dist/ is current, else through tsx.
import { importCompiledOrSource } from '../runtime/source-entry.js';

await importCompiledOrSource(new URL('./compose-thread-body.ts', import.meta.url));
