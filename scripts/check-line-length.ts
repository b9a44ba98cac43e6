/**
 * `npm run lint`'s fourth part: no line of code over 120 columns. Prettier wraps code at 120 but
 * leaves long strings and comments as they are; this catches those. Generated files and data
 * (a hash is 128 characters) are left out; Markdown is prose, wrapped by hand, and its tables
 * cannot wrap. Prints each as FILE:LINE (COLUMNS) and exits 1 when any is found.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';

const ROOT = path.resolve(import.meta.dirname, '..');
const MAX_COLUMNS = 120;
const CODE = /\.(ts|mts|js|mjs|cjs|c|h|sh|yml)$|(^|\/)(Dockerfile|run)$/;
const GENERATED = new Set(['core/kernel/kernel-wasm.generated.ts', 'core/kernel/kernel-simd-wasm.generated.ts']);

const tracked = execFileSync('git', ['ls-files'], { cwd: ROOT, encoding: 'utf8' }).split('\n').filter(Boolean);
const long: string[] = [];
for (const file of tracked) {
  if (!CODE.test(file) || GENERATED.has(file)) continue;
  readFileSync(path.join(ROOT, file), 'utf8')
    .split('\n')
    .forEach((line, index) => {
      // Columns as a reader counts them: characters, not UTF-16 units or bytes.
      const columns = [...line].length;
      if (columns > MAX_COLUMNS) long.push(`${file}:${index + 1} (${columns})`);
    });
}
if (long.length > 0) {
  process.stderr.write(`lines over ${MAX_COLUMNS} columns:\n${long.map((l) => `  ${l}`).join('\n')}\n`);
  process.exit(1);
}
process.stdout.write(`line length: none over ${MAX_COLUMNS} columns\n`);
