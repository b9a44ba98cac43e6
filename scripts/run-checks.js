#!/usr/bin/env node
// `npm test`'s checks before any test runs: the commands of package.json's `typecheck` and `lint`
// scripts, two at a time instead of one after the other. Each is one program on one core (tsc,
// Prettier, typescript-eslint's type-aware pass, our own checks), about a minute in a row on CI's
// two cores. Each command's output is kept and printed whole, in the scripts' order, so nothing is
// interleaved; every command runs (a failure stops nothing else) and the exit status is the first
// failure's, so `npm test` still runs no test after a check that failed.
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';

const SCRIPTS = ['typecheck', 'lint'];
// Started first: lint holds the longest command (eslint's type-aware pass, near half of the whole), so
// one lane runs it while the other runs Prettier, our checks and the three tsc projects.
const STARTED_FIRST = 'lint';
const CONCURRENCY = 2;

const { scripts } = JSON.parse(readFileSync('package.json', 'utf8'));
const commands = SCRIPTS.flatMap((name) => scripts[name].split(' && ').map((command) => ({ name, command })));
const startOrder = [...commands.keys()].sort(
  (a, b) => Number(commands[b].name === STARTED_FIRST) - Number(commands[a].name === STARTED_FIRST),
);

// `shell`: the commands are package.json's, run as npm runs them, node_modules/.bin on the PATH.
const env = { ...process.env, PATH: `${path.resolve('node_modules', '.bin')}${path.delimiter}${process.env.PATH}` };
const run = ({ command }) =>
  new Promise((resolve) => {
    const child = spawn(command, { shell: true, env, stdio: ['ignore', 'pipe', 'pipe'] });
    const chunks = [];
    child.stdout.on('data', (chunk) => chunks.push(chunk));
    child.stderr.on('data', (chunk) => chunks.push(chunk));
    child.on('close', (code, signal) => resolve({ status: code ?? (signal ? 1 : 0), output: Buffer.concat(chunks) }));
  });

const started = Date.now();
const results = new Array(commands.length);
let next = 0;
let printed = 0;
const printReady = () => {
  for (; printed < commands.length && results[printed]; printed++) {
    const { name, command } = commands[printed];
    process.stdout.write(`\n> ${name}: ${command}\n`);
    process.stdout.write(results[printed].output);
  }
};
await Promise.all(
  Array.from({ length: Math.min(CONCURRENCY, commands.length) }, async () => {
    while (next < commands.length) {
      const index = startOrder[next++];
      results[index] = await run(commands[index]);
      printReady();
    }
  }),
);
const failed = results.filter((result) => result.status !== 0);
process.stdout.write(
  `\n${SCRIPTS.join(' and ')}: ${commands.length} commands in ${((Date.now() - started) / 1000).toFixed(1)} s, ` +
    `${failed.length === 0 ? 'all passed' : `${failed.length} failed`}\n`,
);
process.exit(failed[0]?.status ?? 0);
