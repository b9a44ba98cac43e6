/**
 * Reads a JSON input file of the fee check and validates it with its zod schema. Every failure
 * is an input error (the CLI exits 2) naming the file and each bad field: a check that cannot
 * read what it should compare has not compared anything.
 */
import type { z } from 'zod';
import { readJsonObjectFile } from '../deployment/read-json-object-file.ts';
import { CoordinatorError } from '../errors.ts';

export async function readCheckedJsonFile<Schema extends z.ZodTypeAny>(
  path: string,
  label: string,
  schema: Schema,
): Promise<z.output<Schema>> {
  const raw = await readJsonObjectFile(path, label);
  const parsed = schema.safeParse(raw);
  if (!parsed.success) {
    const issues = parsed.error.issues
      .map((issue) => `${issue.path.join('.') || '(root)'}: ${issue.message}`)
      .join('; ');
    throw new CoordinatorError('input.invalid', `${label} file ${path} is invalid: ${issues}`);
  }
  return parsed.data as z.output<Schema>;
}
