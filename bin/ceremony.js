#!/usr/bin/env node
// Entry point of the `ceremony` command. The sources are TypeScript run through tsx, so an
// `npm ci` is all a fresh machine needs before `npx ceremony --help` works.
import { register } from 'tsx/esm/api';

register();
await import('../cli/main.ts');
