/**
 * The online copy `ceremony backup` takes of the coordinator's database
 * (core/data-folder/sqlite-online-backup.ts) while another process keeps writing to it, as a busy
 * coordinator does: it ends (the copy taking the pages the last step counted never did, each write
 * between two steps starting it over), whole (SQLite's quick_check), and as the database stood at
 * one moment between the first and the last row the writer had written.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { REPO_ROOT } from '../fixtures/ceremony-fixture.ts';
import { copySqliteOnline, settleDatabaseCopy } from '../../core/data-folder/sqlite-online-backup.ts';

const ROWS = 20_000;
const LINE = 'x'.repeat(500);

function rowCount(file: string): number {
  const db = new Database(file, { readonly: true });
  try {
    return (db.prepare('SELECT COUNT(*) AS n FROM log').get() as { n: number }).n;
  } finally {
    db.close();
  }
}

test('a database another process keeps writing is copied, whole, as it stood at one moment', async (t) => {
  const dir = await mkdtemp(path.join(tmpdir(), 'online-copy-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const source = path.join(dir, 'coordinator.sqlite');
  const db = new Database(source);
  db.pragma('journal_mode = WAL');
  db.exec('CREATE TABLE log (seq INTEGER PRIMARY KEY, line TEXT NOT NULL)');
  const insert = db.prepare('INSERT INTO log (line) VALUES (?)');
  db.transaction(() => {
    for (let i = 0; i < ROWS; i++) insert.run(LINE);
  })();
  db.close();

  // Another process writing all the time: a hundred rows every millisecond or so.
  const writer = spawn(
    process.execPath,
    [
      '-e',
      `const Database = require('better-sqlite3');
       const db = new Database(${JSON.stringify(source)}, { timeout: 5000 });
       const insert = db.prepare('INSERT INTO log (line) VALUES (?)');
       const batch = db.transaction(() => { for (let i = 0; i < 100; i++) insert.run(${JSON.stringify(LINE)}); });
       process.stdout.write('writing\\n');
       setInterval(batch, 1);`,
    ],
    { cwd: REPO_ROOT, stdio: ['ignore', 'pipe', 'inherit'] },
  );
  t.after(() => writer.kill('SIGKILL'));
  await new Promise((resolve) => writer.stdout!.once('data', resolve));
  const before = rowCount(source);

  const target = path.join(dir, 'copy.sqlite');
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([
    copySqliteOnline(source, target),
    new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error('the copy did not end within 60 s')), 60_000);
    }),
  ]).finally(() => clearTimeout(timer));
  const after = rowCount(source);
  writer.kill('SIGKILL');
  const copy = await settleDatabaseCopy(target);

  assert.ok(copy.bytes > ROWS * LINE.length && copy.pages > 0, JSON.stringify(copy));
  const copied = new Database(target, { readonly: true });
  try {
    assert.equal(copied.pragma('quick_check', { simple: true }), 'ok');
    assert.equal(copied.pragma('journal_mode', { simple: true }), 'delete', 'one file, no -wal beside it');
  } finally {
    copied.close();
  }
  const rows = rowCount(target);
  assert.ok(rows >= before && rows <= after, `${before} ≤ ${rows} ≤ ${after}`);
  assert.ok(after > before, 'the writer wrote during the copy');
});
