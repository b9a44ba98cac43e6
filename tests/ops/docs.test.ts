/**
 * The documentation says what the code does and stands alone: the README is a one-page start (at
 * most 6 kB, the two commands first, the test prerequisites .ci/run installs); no page links outside
 * the repository (tests/ops/repository-hygiene.test.ts checks that no file names such a path), and
 * every link and anchor resolves; every page of docs/ is listed in both indexes;
 * the generated table of error codes is current; the service facts of docs/service.md are the ones
 * the code and tests hold; the kernel page names the kernel's C files, its size and the compilers of
 * its committed bytes as they are.
 */
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { REPO_ROOT } from '../fixtures/ceremony-fixture.ts';
import { SPEC_DELTA_MANIFEST } from '../deployment/spec-delta-manifest.ts';
import { errorCodesDoc, ERROR_CODES_DOC } from '../../scripts/error-codes-doc.ts';
import { KERNEL_MODULE_FILE, KERNEL_SOURCES } from '../../core/kernel/build-kernel-wasm.ts';
import { kernelWasm } from '../../core/kernel/kernel-wasm.generated.ts';

/**
 * Pages written on branches merged after this one: links to them are allowed to dangle until then.
 * Empty this list once they exist (a listed page that exists is checked like any other).
 */
const WRITTEN_ELSEWHERE = new Set<string>();

const read = (relative: string): string => readFileSync(path.join(REPO_ROOT, relative), 'utf8');
const docsPages = (): string[] =>
  readdirSync(path.join(REPO_ROOT, 'docs'))
    .filter((name) => name.endsWith('.md'))
    .map((name) => `docs/${name}`);
const allPages = (): string[] => ['README.md', 'CHANGELOG.md', ...docsPages()];

/** The text outside code: fenced blocks and inline code spans removed. */
function prose(markdown: string): string {
  return markdown.replace(/^```[\s\S]*?^```/gm, '').replace(/`[^`\n]*`/g, '');
}

/** Markdown links and images: their targets. */
function linkTargets(markdown: string): string[] {
  return [...prose(markdown).matchAll(/!?\[[^\]]*\]\(([^)\s]+)\)/g)].map((match) => match[1]!);
}

/** GitHub's anchors of a page's headings. */
function anchors(markdown: string): Set<string> {
  const seen = new Map<string, number>();
  const result = new Set<string>();
  for (const [, heading] of markdown.replace(/^```[\s\S]*?^```/gm, '').matchAll(/^#{1,6}\s+(.+)$/gm)) {
    const slug = heading!
      .trim()
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\s_-]/gu, '')
      .replace(/\s/g, '-');
    const count = seen.get(slug) ?? 0;
    seen.set(slug, count + 1);
    result.add(count === 0 ? slug : `${slug}-${count}`);
  }
  return result;
}

test('the README is a one-page start: at most 6 kB, the two commands first, the test prerequisites', () => {
  const readme = read('README.md');
  assert.ok(Buffer.byteLength(readme) <= 6 * 1024, `README.md is ${Buffer.byteLength(readme)} bytes`);
  const firstBlock = /```sh\n([\s\S]*?)```/.exec(readme)?.[1] ?? '';
  assert.ok(readme.indexOf('```sh') < readme.indexOf('\n## '), 'the commands come before the first section');
  assert.match(firstBlock, /^npm install && npm start\s+#/m);
  assert.match(firstBlock, /^npm test\s+#/m);
  // CI runs exactly the README's test command, after installing the prerequisites it names.
  const ci = read('.ci/run');
  assert.equal(ci.trim().split('\n').at(-1), 'npm test');
  for (const tool of ['redis-server', 'chromium', 'clang', 'lld']) {
    assert.ok(readme.includes(tool), `README.md does not name ${tool}`);
    assert.ok(ci.includes(tool), `.ci/run does not install ${tool}`);
  }
});

test('no page links outside the repository, and every link and anchor resolves', () => {
  const problems: string[] = [];
  for (const page of allPages()) {
    const text = read(page);
    for (const target of linkTargets(text)) {
      if (/^[a-z]+:/i.test(target)) {
        problems.push(`${page}: ${target} points outside the repository`);
        continue;
      }
      const [file, anchor] = target.split('#') as [string, string | undefined];
      const resolved = file === '' ? page : path.posix.normalize(path.posix.join(path.posix.dirname(page), file));
      if (resolved.startsWith('..') || path.posix.isAbsolute(file)) {
        problems.push(`${page}: ${target} points outside the repository`);
      } else if (!existsSync(path.join(REPO_ROOT, resolved))) {
        if (!WRITTEN_ELSEWHERE.has(resolved)) problems.push(`${page}: ${target} does not exist`);
      } else if (anchor !== undefined && resolved.endsWith('.md') && !anchors(read(resolved)).has(anchor)) {
        problems.push(`${page}: ${target}: ${resolved} has no heading #${anchor}`);
      }
    }
  }
  assert.deepEqual(problems, []);
});

test('every page of docs/ is listed in the README and in docs/README.md', () => {
  const readmeLinks = new Set(linkTargets(read('README.md')).map((target) => target.split('#')[0]));
  const indexLinks = new Set(linkTargets(read('docs/README.md')).map((target) => `docs/${target.split('#')[0]}`));
  const pages = [...docsPages().filter((page) => page !== 'docs/README.md'), ...WRITTEN_ELSEWHERE].filter((page) =>
    page.startsWith('docs/'),
  );
  for (const page of new Set(pages)) {
    assert.ok(readmeLinks.has(page), `README.md does not link ${page}`);
    assert.ok(indexLinks.has(page), `docs/README.md does not link ${page}`);
  }
});

test('docs/error-codes.md is the table the code holds (npm run docs:errors writes it)', () => {
  const message = 'docs/error-codes.md is out of date: run npm run docs:errors';
  assert.equal(readFileSync(ERROR_CODES_DOC, 'utf8'), errorCodesDoc(), message);
});

/** The rows of the Markdown table that follows `heading` in `markdown`, as cells. */
function tableAfter(markdown: string, heading: string): string[][] {
  const start = markdown.indexOf(heading);
  assert.ok(start >= 0, `no "${heading}"`);
  const lines = markdown.slice(start).split('\n');
  const first = lines.findIndex((line) => line.startsWith('|'));
  const rows: string[][] = [];
  for (const line of lines.slice(first + 2)) {
    if (!line.startsWith('|')) break;
    rows.push(
      line
        .slice(1, -1)
        .split('|')
        .map((cell) => cell.trim().replaceAll('`', '')),
    );
  }
  return rows;
}

test('docs/service.md holds the circuits of ceremony.json, the deltas the tests use and the shipped fees', () => {
  const service = read('docs/service.md');
  const config = JSON.parse(read('ceremony-data/ceremony.json')) as {
    circuits: { name: string; verifier: string; publicInputs: number }[];
  };
  const circuitRows = tableAfter(service, '## The nine circuits');
  const circuits = circuitRows.map(([name, verifier, inputs]) => [name, verifier, Number(inputs)]);
  assert.deepEqual(
    circuits,
    config.circuits.map((c) => [c.name, c.verifier, c.publicInputs]),
  );

  const deltas = tableAfter(service, "**The service's expected deltas.**");
  const manifest = Object.fromEntries(deltas.map(([verifier, deltax1, deltax2]) => [verifier, { deltax1, deltax2 }]));
  assert.deepEqual(manifest, SPEC_DELTA_MANIFEST);

  const fees = JSON.parse(read('core/fees/published-fees.json')) as Record<string, string>;
  const feeRows = tableAfter(service, '## Fees');
  const published = feeRows.map((row) => row[2]!).join(' ');
  assert.match(published, new RegExp(`^${fees.poolWithdrawFeeBps} bps`));
  for (const key of ['relayFeeUsdcBaseUnits', 'gasPurchaseFeeUsdcBaseUnits', 'gasPurchaseDropWei']) {
    assert.ok(published.includes(`(${fees[key]}`), `docs/service.md's fees do not show ${key} = ${fees[key]}`);
  }
});

test('docs/kernel.md names every C file of the kernel, its size and the compilers of the committed bytes', () => {
  const kernel = read('docs/kernel.md');
  for (const file of KERNEL_SOURCES.map((source) => path.basename(source))) {
    assert.ok(kernel.includes(`\`${file}\``), `docs/kernel.md does not name ${file}`);
  }
  const claimed = Number(/about (\d+) kB of\s+WebAssembly/.exec(kernel)?.[1]);
  const actual = kernelWasm().length / 1000;
  const sizeMessage = `docs/kernel.md says about ${claimed} kB; the module is ${actual.toFixed(1)} kB`;
  assert.ok(Math.abs(claimed - actual) / actual < 0.1, sizeMessage);
  const header = /^\/\/ Built with (.*?) and (.*?):/m.exec(readFileSync(KERNEL_MODULE_FILE, 'utf8'));
  assert.ok(header, 'the generated module names the compilers that built it');
  const versions = (text: string) =>
    [...text.matchAll(/(clang|LLD)[^\d]*(\d+\.\d+\.\d+)/gi)].map((match) => `${match[1]!.toLowerCase()} ${match[2]}`);
  const documented = /committed bytes were\s+built with ([^(]*)\(/.exec(kernel)?.[1] ?? '';
  const built = versions(`${header[1]} ${header[2]}`);
  assert.deepEqual(versions(documented), built, `docs/kernel.md: "${documented.trim()}"`);
});
