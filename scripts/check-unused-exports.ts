/**
 * `npm run lint`'s third part: every name a module exports is imported by another module. An export
 * nobody imports is dead code, or a name the module should keep to itself; typescript-eslint sees
 * one file at a time and cannot tell. Prints each as FILE:LINE NAME and exits 1 when any is found.
 *
 * Reads the import and export statements of every source file (TypeScript's parser, no type
 * check), resolves relative specifiers, and counts a name used when a named import or re-export
 * takes it. A namespace import, `export *` and a dynamic `import()` count as using every name (the
 * commands and the thread bodies are loaded that way). Entry files (commands run by node, test
 * files, the page's entry, configuration files) export for their runner, so they are not checked.
 * Types are not checked: a public function's option and result types are exported for its callers
 * to name, whether or not one does today.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import ts from 'typescript';
import { resolveSpecifier, ROOT, sourceFiles } from './source-files.ts';

const SOURCE_FOLDERS = ['bench', 'bin', 'cli', 'core', 'scripts', 'server', 'tests', 'types', 'web/src', 'worker'];
/** Files a runner loads by path: what they export is for it, not for another module. */
const ENTRY = [
  /^bin\//,
  /^scripts\//,
  /^bench\/[^/]+\.ts$/,
  /\.test\.ts$/,
  /^tests\/setup\.mjs$/,
  /^web\/src\/main\.ts$/,
  /\.d\.ts$/,
  /^cli\/main\.ts$/,
];

interface Exported {
  name: string;
  line: number;
}

const files = SOURCE_FOLDERS.flatMap((dir) => sourceFiles(dir));
const known = new Set(files);
const resolve = (from: string, specifier: string): string | undefined => resolveSpecifier(known, from, specifier);
const exportsOf = new Map<string, Exported[]>();
/** File → the names other modules take from it ('*': all of them). */
const used = new Map<string, Set<string>>();

function use(file: string | undefined, name: string): void {
  if (!file) return;
  if (!used.has(file)) used.set(file, new Set());
  used.get(file)!.add(name);
}

const hasExportKeyword = (node: ts.Node): boolean =>
  ts.canHaveModifiers(node) && (ts.getModifiers(node) ?? []).some((m) => m.kind === ts.SyntaxKind.ExportKeyword);

for (const file of files) {
  const text = readFileSync(path.join(ROOT, file), 'utf8');
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  const exported: Exported[] = [];
  const lineOf = (node: ts.Node): number => source.getLineAndCharacterOfPosition(node.getStart(source)).line + 1;

  const visit = (node: ts.Node): void => {
    if (ts.isImportDeclaration(node) && ts.isStringLiteral(node.moduleSpecifier)) {
      const target = resolve(file, node.moduleSpecifier.text);
      const clause = node.importClause;
      if (!clause) use(target, '*'); // a side-effect import
      if (clause?.name) use(target, 'default');
      const bindings = clause?.namedBindings;
      if (bindings && ts.isNamespaceImport(bindings)) use(target, '*');
      if (bindings && ts.isNamedImports(bindings)) {
        for (const element of bindings.elements) use(target, (element.propertyName ?? element.name).text);
      }
    } else if (ts.isExportDeclaration(node)) {
      const target =
        node.moduleSpecifier && ts.isStringLiteral(node.moduleSpecifier)
          ? resolve(file, node.moduleSpecifier.text)
          : undefined;
      if (!node.exportClause) use(target, '*');
      else if (ts.isNamedExports(node.exportClause)) {
        for (const element of node.exportClause.elements) {
          if (node.moduleSpecifier) use(target, (element.propertyName ?? element.name).text);
          else if (!node.isTypeOnly && !element.isTypeOnly) {
            exported.push({ name: element.name.text, line: lineOf(element) });
          }
        }
      }
    } else if (ts.isExportAssignment(node)) {
      exported.push({ name: 'default', line: lineOf(node) });
    } else if (
      ts.isCallExpression(node) &&
      node.expression.kind === ts.SyntaxKind.ImportKeyword &&
      node.arguments[0] &&
      ts.isStringLiteral(node.arguments[0])
    ) {
      use(resolve(file, node.arguments[0].text), '*');
    } else if (
      ts.isNewExpression(node) &&
      ts.isIdentifier(node.expression) &&
      node.expression.text === 'URL' &&
      node.arguments?.[0] &&
      ts.isStringLiteral(node.arguments[0])
    ) {
      // new URL('./thread.mjs', import.meta.url): a thread or process entry, loaded by path.
      use(resolve(file, node.arguments[0].text), '*');
    } else if (hasExportKeyword(node)) {
      const isDefault = (ts.getModifiers(node as ts.HasModifiers) ?? []).some(
        (m) => m.kind === ts.SyntaxKind.DefaultKeyword,
      );
      if (isDefault) exported.push({ name: 'default', line: lineOf(node) });
      else if (ts.isVariableStatement(node)) {
        for (const declaration of node.declarationList.declarations) {
          if (ts.isIdentifier(declaration.name))
            exported.push({ name: declaration.name.text, line: lineOf(declaration) });
        }
      } else if (
        (ts.isFunctionDeclaration(node) || ts.isClassDeclaration(node) || ts.isEnumDeclaration(node)) &&
        node.name
      ) {
        exported.push({ name: node.name.text, line: lineOf(node) });
      }
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  exportsOf.set(file, exported);
}

const unused: string[] = [];
for (const [file, exported] of exportsOf) {
  if (ENTRY.some((pattern) => pattern.test(file))) continue;
  const names = used.get(file) ?? new Set<string>();
  if (names.has('*')) continue;
  for (const { name, line } of exported) {
    if (!names.has(name)) unused.push(`${file}:${line} ${name}`);
  }
}
if (unused.length > 0) {
  process.stderr.write(
    `exported but imported by no other module (drop the export, or the ` +
      `code if nothing uses it):\n${unused.map((u) => `  ${u}`).join('\n')}\n`,
  );
  process.exit(1);
}
process.stdout.write(`unused exports: none in ${files.length} files\n`);
