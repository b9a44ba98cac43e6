// Entry of the embedded verifier process (server/verification-dispatch/embedded-dispatcher.ts forks it).
// Plain JavaScript so that it does not depend on how the coordinator itself loaded TypeScript
// (bin/ceremony.js, tsx's CLI, `node --import tsx`, or a test runner): it loads the verifier itself,
// compiled when dist/ is current, else through tsx.
import { importCompiledOrSource } from '../core/runtime/source-entry.js';

await importCompiledOrSource(new URL('./embedded-verifier.ts', import.meta.url));
