/**
 * Reads a JSON file that must hold a JSON object, the shape of both inputs of the deployment
 * check. Every failure is an input error (the CLI exits 2), never a mismatch: a check that cannot
 * read what it should compare has not compared anything.
 */
import { readFile } from 'node:fs/promises';
import { CoordinatorError } from '../errors.ts';

/**
 * Returns the parsed object with its keys in file order. `label` names the file in messages
 * (e.g. `manifest`).
 */
export async function readJsonObjectFile(path: string, label: string): Promise<Record<string, unknown>> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') throw new CoordinatorError('input.file_not_found', `${label} file not found: ${path}`);
    throw new CoordinatorError('input.invalid', `cannot read ${label} file ${path}: ${(error as Error).message}`);
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new CoordinatorError(
      'input.not_json',
      `${label} file ${path} is not valid JSON: ${(error as Error).message}`,
    );
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    const kind = Array.isArray(value) ? 'an array' : value === null ? 'null' : `a ${typeof value}`;
    throw new CoordinatorError('input.invalid', `${label} file ${path} must hold a JSON object, not ${kind}`);
  }
  return value as Record<string, unknown>;
}
