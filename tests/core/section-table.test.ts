/**
 * The binfile section table shared by the zkey and ptau readers: sections located without reading
 * them, and every way a table can lie (magic, count, an id twice, a size past the end) refused.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, open, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { readSectionTable, SectionTableError } from '../../core/binfile/section-table.ts';
import { readExactly, ShortReadError } from '../../core/binfile/read-exactly.ts';

let dir: string;
before(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'section-table-'));
});
after(async () => {
  await rm(dir, { recursive: true, force: true });
});

function binfile(
  magic: string,
  sections: Array<[id: number, data: Buffer, declaredSize?: number]>,
  count = sections.length,
): Buffer {
  const head = Buffer.alloc(12);
  head.write(magic, 0, 'latin1');
  head.writeUInt32LE(7, 4);
  head.writeUInt32LE(count, 8);
  const parts: Buffer[] = [head];
  for (const [id, data, declaredSize] of sections) {
    const entry = Buffer.alloc(12);
    entry.writeUInt32LE(id, 0);
    entry.writeBigUInt64LE(BigInt(declaredSize ?? data.length), 4);
    parts.push(entry, data);
  }
  return Buffer.concat(parts);
}

async function tableOf(bytes: Buffer, magic = 'zkey', expectedCount?: number) {
  const file = path.join(dir, `f-${Math.random().toString(36).slice(2)}`);
  await writeFile(file, bytes);
  const handle = await open(file, 'r');
  try {
    return await readSectionTable(handle, bytes.length, magic, expectedCount);
  } finally {
    await handle.close();
  }
}

async function refused(bytes: Buffer, pattern: RegExp, magic = 'zkey', expectedCount?: number): Promise<void> {
  await assert.rejects(
    tableOf(bytes, magic, expectedCount),
    (e: unknown) => e instanceof SectionTableError && pattern.test(e.message),
  );
}

test('locates every section, its version and where the last one ends', async () => {
  const bytes = binfile('ptau', [
    [1, Buffer.from('abc')],
    [7, Buffer.alloc(0)],
    [2, Buffer.from('hello')],
  ]);
  const table = await tableOf(bytes, 'ptau', 3);
  assert.equal(table.version, 7);
  assert.equal(table.count, 3);
  assert.deepEqual(
    [...table.sections],
    [
      [1, { offset: 24, size: 3 }],
      [7, { offset: 39, size: 0 }],
      [2, { offset: 51, size: 5 }],
    ],
  );
  assert.equal(table.end, bytes.length);
  assert.equal(bytes.toString('latin1', 51, 56), 'hello');
});

test('refuses a wrong magic, a wrong count, an id twice, a truncated table or section', async () => {
  const one = binfile('zkey', [[1, Buffer.from('abcd')]]);
  await refused(one, /missing "ptau" magic bytes/, 'ptau');
  await refused(one.subarray(0, 8), /too short/);
  await refused(one, /expected 10 sections, found 1/, 'zkey', 10);
  await refused(
    binfile('zkey', [
      [1, Buffer.from('a')],
      [1, Buffer.from('b')],
    ]),
    /section 1 appears twice/,
  );
  await refused(binfile('zkey', [[1, Buffer.from('a')]], 2), /truncated in the section table/);
  await refused(binfile('zkey', [[3, Buffer.from('abc'), 4]]), /section 3 runs past the end/);
});

test('readExactly returns the range asked for, or fails at the end of the file', async () => {
  const file = path.join(dir, 'short');
  await writeFile(file, Buffer.from('0123456789'));
  const handle = await open(file, 'r');
  try {
    assert.equal((await readExactly(handle, 2, 5)).toString(), '23456');
    await assert.rejects(readExactly(handle, 8, 3), ShortReadError);
  } finally {
    await handle.close();
  }
});
