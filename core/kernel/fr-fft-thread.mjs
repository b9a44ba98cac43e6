// Entry of an inverse-FFT thread run from sources: worker threads do not inherit the parent's tsx
// hooks, so the thread registers them before loading its TypeScript body.
import { register } from 'tsx/esm/api';

register();
await import('./fr-fft-thread-body.ts');
