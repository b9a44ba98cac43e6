/**
 * `npm run lint`'s fifth part: no import circle, and nothing under core/ imports scripts/. A circle
 * makes the load order decide which module sees the other half-initialised, and core/ is the
 * library the server, the worker, the CLI and the page share: a build or test script is no part of
 * it. Prints each circle as A -> B -> A, each core/ file importing scripts/ as FILE -> TARGET, and
 * exits 1 when any is found.
 *
 * Reads the static import and export-from specifiers of every source file (TypeScript's parser, no
 * type check) and resolves the relative ones. A type-only import counts: it is erased at build, but
 * two modules that each name the other's types are still one piece split in two, and the shared
 * types belong in a module both import. A dynamic `import()` runs after the importing module has
 * loaded (the commands and the thread bodies are loaded that way), so it is left out.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import ts from 'typescript';
import { resolveSpecifier, ROOT, sourceFiles } from './source-files.ts';

const SOURCE_FOLDERS = ['core', 'server', 'worker', 'cli', 'client', 'web/src', 'scripts', 'bench'];

const files = SOURCE_FOLDERS.flatMap((dir) => sourceFiles(dir)).filter((file) => !file.endsWith('.d.ts'));
const known = new Set(files);

/** The specifiers of one file's top-level import and export-from statements. */
function importsOf(file: string): string[] {
  const text = readFileSync(path.join(ROOT, file), 'utf8');
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, false);
  const specifiers: string[] = [];
  for (const statement of source.statements) {
    if (ts.isImportDeclaration(statement) && ts.isStringLiteral(statement.moduleSpecifier)) {
      specifiers.push(statement.moduleSpecifier.text);
    } else if (
      ts.isExportDeclaration(statement) &&
      statement.moduleSpecifier &&
      ts.isStringLiteral(statement.moduleSpecifier)
    ) {
      specifiers.push(statement.moduleSpecifier.text);
    }
  }
  return specifiers;
}

const edges = new Map<string, string[]>();
const coreToScripts: string[] = [];
for (const file of files) {
  const targets = importsOf(file)
    .map((specifier) => resolveSpecifier(known, file, specifier))
    .filter((target): target is string => target !== undefined);
  edges.set(file, [...new Set(targets)].sort());
  for (const target of targets) {
    if (file.startsWith('core/') && target.startsWith('scripts/')) coreToScripts.push(`${file} -> ${target}`);
  }
}

/** Tarjan's strongly connected components: every component of two or more files holds a circle. */
function circles(): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  let next = 0;
  const visit = (file: string): void => {
    index.set(file, next);
    low.set(file, next);
    next += 1;
    stack.push(file);
    onStack.add(file);
    for (const target of edges.get(file) ?? []) {
      if (!index.has(target)) {
        visit(target);
        low.set(file, Math.min(low.get(file)!, low.get(target)!));
      } else if (onStack.has(target)) {
        low.set(file, Math.min(low.get(file)!, index.get(target)!));
      }
    }
    if (low.get(file) !== index.get(file)) return;
    const component: string[] = [];
    let member: string;
    do {
      member = stack.pop()!;
      onStack.delete(member);
      component.push(member);
    } while (member !== file);
    const selfImport = (edges.get(file) ?? []).includes(file);
    if (component.length > 1 || selfImport) found.push(component.sort());
  };
  for (const file of [...files].sort()) if (!index.has(file)) visit(file);
  return found;
}

/** One path around a component, from its first file back to it, to show where to cut. */
function loopThrough(component: string[]): string {
  const members = new Set(component);
  const start = component[0]!;
  const previous = new Map<string, string>();
  const queue = [start];
  while (queue.length > 0) {
    const file = queue.shift()!;
    for (const target of edges.get(file) ?? []) {
      if (target === start) {
        const loop = [start];
        for (let at: string | undefined = file; at !== start && at; at = previous.get(at)) loop.splice(1, 0, at);
        return [...loop, start].join(' -> ');
      }
      if (members.has(target) && !previous.has(target)) {
        previous.set(target, file);
        queue.push(target);
      }
    }
  }
  return component.join(', ');
}

const found = circles();
const problems = [
  ...found.map((component) => `circle (${component.length} files): ${loopThrough(component)}`),
  ...coreToScripts.map((line) => `core imports scripts: ${line}`),
];
if (problems.length > 0) {
  process.stderr.write(`import structure:\n${problems.map((p) => `  ${p}`).join('\n')}\n`);
  process.exit(1);
}
process.stdout.write(`import cycles: none in ${files.length} files, and core/ imports nothing from scripts/\n`);
