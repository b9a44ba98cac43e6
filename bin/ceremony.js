#!/usr/bin/env node
// Entry point of the `ceremony` command. It runs the compiled app (dist/, built by `npm install`,
// `npm start`, `npm test` or `npm run build`) with plain Node. In a checkout whose sources changed
// since the last build, the compiled code would be old code: then it runs the TypeScript sources
// through tsx instead, and says so, so nobody debugs yesterday's build.
import { buildState } from '../core/runtime/build-state.js';

const state = buildState('dist');
// The browser app is served as built: say so when it is older than its sources.
if (process.argv[2] === 'serve' && buildState('web') === 'stale') {
  process.stderr.write('note: web/dist is older than its sources; `npm run build` rebuilds it\n');
}
if (state === 'current' || state === 'no-sources') {
  await import('../dist/cli/main.js');
} else {
  process.stderr.write(
    state === 'stale'
      ? 'note: dist/ is older than the sources; running the sources through ' +
          'tsx (slower start; `npm run build` compiles them)\n'
      : 'note: the app is not compiled; running the sources through tsx ' +
          '(slower start; `npm run build` compiles them)\n',
  );
  const { register } = await import('tsx/esm/api');
  register();
  await import('../cli/main.ts');
}
