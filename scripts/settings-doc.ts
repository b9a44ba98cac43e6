/**
 * Writes the settings tables of docs/operations.md (between its settings markers) from the modules'
 * settings fragments (composed by server/config/server-config.ts), the same list `ceremony serve
 * --help` prints: `npm run docs:settings` after adding or changing a setting;
 * tests/cli/serve-settings.test.ts fails while the page is out of date.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { withSettingsDocBlock } from '../server/config/settings-doc.ts';

export const OPERATIONS_DOC = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', 'docs', 'operations.md');

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  writeFileSync(OPERATIONS_DOC, withSettingsDocBlock(readFileSync(OPERATIONS_DOC, 'utf8')));
  console.log(`wrote the settings of ${path.relative(process.cwd(), OPERATIONS_DOC)}`);
}
