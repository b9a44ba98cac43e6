// Entry of the embedded verifier process (server/verification-dispatch/embedded-dispatcher.ts forks it).
// Plain JavaScript so that it does not depend on how the coordinator itself loaded TypeScript
// (bin/ceremony.js, tsx's CLI, `node --import tsx`, or a test runner): it registers tsx for
// itself, then loads the TypeScript module.
import { register } from 'tsx/esm/api';

register();
await import('./embedded-verifier.ts');
