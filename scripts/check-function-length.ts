/**
 * `npm run lint`'s sixth part: no function over 100 lines outside the tests. A function that long
 * does several things in turn, and its reader has to hold all of them at once; split into named
 * steps, each says what it is for. Functions, methods, constructors, accessors and arrow functions
 * are measured from their first line to their last, a function inside another counting in both.
 * Prints each as FILE:LINE NAME (LINES) and exits 1 when any is found.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import ts from 'typescript';
import { ROOT, sourceFiles } from './source-files.ts';

const MAX_LINES = 100;
const SOURCE_FOLDERS = ['bench', 'bin', 'cli', 'client', 'core', 'scripts', 'server', 'types', 'web/src', 'worker'];
const GENERATED = new Set(['core/kernel/kernel-wasm.generated.ts', 'core/kernel/kernel-simd-wasm.generated.ts']);

/** A readable name for a function: its own, its variable's, its property's, or its class member's. */
function nameOf(node: ts.FunctionLikeDeclaration, source: ts.SourceFile): string {
  const className = (): string => {
    const owner = node.parent;
    return ts.isClassLike(owner) && owner.name ? `${owner.name.text}.` : '';
  };
  if (ts.isConstructorDeclaration(node)) return `${className()}constructor`;
  if (node.name) return `${className()}${node.name.getText(source)}`;
  const parent = node.parent;
  if (ts.isVariableDeclaration(parent) || ts.isPropertyAssignment(parent) || ts.isPropertyDeclaration(parent)) {
    return parent.name.getText(source);
  }
  if (ts.isCallExpression(parent)) return `(argument of ${parent.expression.getText(source).slice(0, 40)})`;
  return '(anonymous)';
}

const long: string[] = [];
let measured = 0;
const files = SOURCE_FOLDERS.flatMap((dir) => sourceFiles(dir, /\.(ts|mts|js|mjs|cjs)$/));
for (const file of files.filter((name) => !name.endsWith('.d.ts'))) {
  if (GENERATED.has(file)) continue;
  const text = readFileSync(path.join(ROOT, file), 'utf8');
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  const visit = (node: ts.Node): void => {
    if (ts.isFunctionLike(node) && 'body' in node && node.body) {
      const declaration = node as ts.FunctionLikeDeclaration;
      measured += 1;
      const first = source.getLineAndCharacterOfPosition(declaration.getStart(source)).line + 1;
      const last = source.getLineAndCharacterOfPosition(declaration.getEnd()).line + 1;
      const lines = last - first + 1;
      if (lines > MAX_LINES) long.push(`${file}:${first} ${nameOf(declaration, source)} (${lines})`);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
}
if (long.length > 0) {
  process.stderr.write(`functions over ${MAX_LINES} lines (split them into named steps):\n`);
  process.stderr.write(`${long.map((l) => `  ${l}`).join('\n')}\n`);
  process.exit(1);
}
process.stdout.write(`function length: none of ${measured} over ${MAX_LINES} lines\n`);
