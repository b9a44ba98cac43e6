// Entry of the in-process verification thread. Plain JavaScript because a worker thread does not
// inherit the parent's TypeScript loader (and Node 20 ignores `--import` in a worker's execArgv):
// it registers tsx for itself, then loads the TypeScript module.
import { register } from 'tsx/esm/api';

register();
await import('./verification-thread.ts');
