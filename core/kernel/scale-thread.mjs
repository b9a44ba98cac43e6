// Entry of a Node kernel thread: worker threads do not inherit the parent's tsx hooks, so the
// thread registers them before loading its TypeScript body.
import { register } from 'tsx/esm/api';

register();
await import('./scale-thread-body.ts');
