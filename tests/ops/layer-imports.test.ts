/**
 * The layering docs/architecture.md describes, checked on the sources so it stays true: core imports nothing
 * outside core; server and worker never import each other (what they share, the verifier
 * contract, lives in core/verifier-contract/); web/ and cli/ read the coordinator's API shapes from
 * core/coordinator-api/, never from server/ or web/, and share the protocol through client/, which
 * neither server/ nor core/ imports. A source scan of every import specifier, static
 * and dynamic, resolved against the importing file; and the same rules as ESLint errors at the
 * import line (eslint.config.js), checked to fire.
 */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { ESLint } from 'eslint';

const ROOT = path.resolve(import.meta.dirname, '..', '..');
const LAYERS = ['core', 'client', 'server', 'worker', 'cli', 'web'] as const;
type Layer = (typeof LAYERS)[number];

/** Which layers each layer may not import. */
const FORBIDDEN: Partial<Record<Layer, readonly Layer[]>> = {
  core: ['client', 'server', 'worker', 'cli', 'web'],
  client: ['server', 'worker', 'cli', 'web'],
  server: ['client', 'worker', 'cli'],
  worker: ['client', 'server', 'cli'],
  cli: ['web'],
  web: ['server', 'worker', 'cli'],
};

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    if (entry.name === 'node_modules' || entry.name === 'dist') return [];
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(full);
    return /\.(ts|js|mjs)$/.test(entry.name) && !entry.name.endsWith('.d.ts') ? [full] : [];
  });
}

/** Every module specifier of `source`: `import … from 'x'`, `export … from 'x'`, `import 'x'`, `import('x')`. */
export function importSpecifiers(source: string): string[] {
  const pattern = /(?:\bfrom\s*|\bimport\s*\(\s*|^\s*import\s+)(['"])([^'"\n]+)\1/gm;
  return [...source.matchAll(pattern)].map((match) => match[2]!);
}

function layerOf(file: string): Layer | undefined {
  const first = path.relative(ROOT, file).split(path.sep)[0];
  return LAYERS.find((layer) => layer === first);
}

function violations(layer: Layer): string[] {
  const forbidden = FORBIDDEN[layer] ?? [];
  return sourceFiles(path.join(ROOT, layer)).flatMap((file) =>
    importSpecifiers(readFileSync(file, 'utf8'))
      .filter((specifier) => specifier.startsWith('.'))
      .filter((specifier) => forbidden.includes(layerOf(path.resolve(path.dirname(file), specifier))!))
      .map((specifier) => `${path.relative(ROOT, file)} imports ${specifier}`),
  );
}

test('the scan sees static, re-exported, side-effect and dynamic imports', () => {
  const source = [
    "import { a } from '../server/a.ts';",
    'import type { B } from "../worker/b.ts";',
    "export { c } from './c.ts';",
    "import './d.js';",
    "const e = await import('../cli/e.ts');",
  ].join('\n');
  assert.deepEqual(importSpecifiers(source), ['../server/a.ts', '../worker/b.ts', './c.ts', './d.js', '../cli/e.ts']);
});

for (const layer of Object.keys(FORBIDDEN) as Layer[]) {
  test(`${layer}/ imports none of ${FORBIDDEN[layer]!.join(', ')}`, () => {
    assert.ok(sourceFiles(path.join(ROOT, layer)).length > 0, `no sources found under ${layer}/`);
    assert.deepEqual(violations(layer), []);
  });
}

test('the lint rules refuse a forbidden import at its line, and let an allowed one through', async () => {
  const eslint = new ESLint({ cwd: ROOT });
  // Plain JavaScript sources, so no type information is needed; the rules are the same for .ts.
  // The lines of no-restricted-imports errors only (the probes' names are otherwise unused).
  const lint = async (filePath: string, source: string): Promise<string[]> => {
    const [result] = await eslint.lintText(source, { filePath: path.join(ROOT, filePath) });
    return (result?.messages ?? []).filter((m) => m.ruleId === 'no-restricted-imports').map((m) => `line ${m.line}`);
  };
  const probes: Array<[string, string]> = [
    ['core/probe.js', "import { a } from '../server/a.js';"],
    ['core/zkey/probe.js', "export { b } from '../../web/src/b.js';"],
    ['server/probe.js', "import { c } from '../worker/c.js';"],
    ['worker/probe.js', "import { d } from '../server/d.js';"],
    ['cli/contributor/probe.js', "import { e } from '../../web/src/api/e.js';"],
    ['web/src/pages/probe.js', "import { f } from '../../../server/f.js';"],
    ['web/src/pages/probe.js', "import { readFile } from 'node:fs/promises';"],
    ['client/probe.js', "import { i } from '../cli/contributor/i.js';"],
    ['client/probe.js', "import { readFile } from 'node:fs/promises';"],
    ['server/routes/probe.js', "import { j } from '../../client/j.js';"],
  ];
  for (const [file, line] of probes) {
    assert.deepEqual(await lint(file, `// a probe\n${line}\n`), ['line 2'], `${file}: ${line}`);
  }
  assert.deepEqual(await lint('web/src/pages/probe.js', "import { g } from '../../../core/ceremony/g.js';\n"), []);
  assert.deepEqual(await lint('cli/probe.js', "import { h } from '../server/h.js';\n"), []);
  assert.deepEqual(await lint('cli/probe.js', "import { k } from '../client/k.js';\n"), []);
  assert.deepEqual(await lint('client/probe.js', "import { l } from '../core/coordinator-api/l.js';\n"), []);
});
