/**
 * The queue log and SQLite agree after a kill -9 at any moment: the log's entries are written in
 * the transactions of the changes they record, and its public file, appended after each commit, is
 * at every moment a line-for-line prefix of the table (at worst a torn last line), which the next
 * start brings level. Also: a file holding entries the database lacks stops the start.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { checkQueueLog } from '../../../core/queue-log/queue-log-entry.ts';
import { isCoordinatorError } from '../../../core/errors.ts';
import { openDatabase } from '../../../server/store/database.ts';
import { REPO_ROOT } from '../../fixtures/ceremony-fixture.ts';
import { cleanUp } from '../../helpers/clean-up.ts';
import { makeLobby } from './lobby-helpers.ts';

/** Runs the writer until it has worked for `ms`, then kills it with SIGKILL. */
function runAndKill(database: string, file: string, ms: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(
      process.execPath,
      ['--import', 'tsx', path.join(REPO_ROOT, 'tests', 'helpers', 'queue-log-writer.ts'), database, file],
      { cwd: REPO_ROOT, stdio: ['ignore', 'pipe', 'inherit'] },
    );
    let timer: NodeJS.Timeout | undefined;
    child.stdout.on('data', (chunk: Buffer) => {
      if (timer === undefined && chunk.toString().includes('ready'))
        timer = setTimeout(() => child.kill('SIGKILL'), ms);
    });
    child.on('error', reject);
    child.on('close', (_code, signal) => {
      clearTimeout(timer);
      if (signal === 'SIGKILL') resolve();
      else reject(new Error(`the writer stopped by itself (${signal ?? _code})`));
    });
  });
}

function tableLines(database: string): string[] {
  const db = openDatabase(database);
  try {
    return (db.prepare('SELECT line FROM queue_log ORDER BY seq').all() as Array<{ line: string }>).map((r) => r.line);
  } finally {
    db.close();
  }
}

test(
  'kill -9 at any moment: the public file is a prefix of the table, and the next start makes them one',
  {
    timeout: 180_000,
  },
  async () => {
    const dir = await mkdtemp(path.join(tmpdir(), 'queue-log-crash-'));
    try {
      const database = path.join(dir, 'coordinator.sqlite');
      const file = path.join(dir, 'queue-log.jsonl');
      let entries = 0;
      for (const ms of [150, 400, 90, 700, 260, 530, 50, 330]) {
        await runAndKill(database, file, ms);
        const table = tableLines(database);
        const text = await readFile(file, 'utf8');
        const lines = text.split('\n');
        const torn = lines.pop();
        assert.ok(lines.length <= table.length, 'the file never runs ahead of the table');
        lines.forEach((line, i) => assert.equal(line, table[i], `line ${i + 1} of the file is the table's`));
        if (torn) assert.ok(table[lines.length]!.startsWith(torn), 'a torn last line is the start of the next entry');
        assert.ok(table.length >= entries, 'no entry of the table is ever lost');
        entries = table.length;
        checkQueueLog(
          'crash-test',
          table.map((line) => JSON.parse(line)),
          'in the table',
        );
      }
      // Killed early under load a run may add nothing; over eight runs the writer gets going.
      assert.ok(entries > 100, `the writer made progress (${entries} entries)`);
      // The next start levels the file with the table.
      const db = openDatabase(database);
      makeLobby({ ceremonyId: 'crash-test', circuits: ['a', 'b'], queueLog: { file } }, db);
      const table = (db.prepare('SELECT line FROM queue_log ORDER BY seq').all() as Array<{ line: string }>).map(
        (r) => r.line,
      );
      db.close();
      assert.equal(await readFile(file, 'utf8'), table.map((line) => `${line}\n`).join(''));
    } finally {
      await cleanUp(dir);
    }
  },
);

test('the start repairs a torn or differing file from the table, and refuses one that runs ahead of it', async () => {
  const dir = await mkdtemp(path.join(tmpdir(), 'queue-log-level-'));
  try {
    const database = path.join(dir, 'coordinator.sqlite');
    const file = path.join(dir, 'queue-log.jsonl');
    const first = makeLobby({ queueLog: { file } }, openDatabase(database));
    first.lobby.join('alice');
    first.lobby.join('bob');
    first.db.close();
    const whole = await readFile(file, 'utf8');
    const reopen = () => {
      const fixture = makeLobby({ queueLog: { file } }, openDatabase(database));
      fixture.db.close();
    };
    await writeFile(file, whole.slice(0, whole.length - 20)); // torn
    reopen();
    assert.equal(await readFile(file, 'utf8'), whole);
    await writeFile(file, whole.replace('"bob"', '"mallory"')); // differs
    reopen();
    assert.equal(await readFile(file, 'utf8'), whole);
    await writeFile(file, whole.split('\n').slice(0, 1).join('\n') + '\n'); // a prefix
    reopen();
    assert.equal(await readFile(file, 'utf8'), whole);
    await writeFile(file, `${whole}${whole.split('\n')[0]}\n`); // ahead of the table
    assert.throws(
      reopen,
      (error: unknown) => isCoordinatorError(error, 'config.invalid') && /holds entries/.test(error.message),
    );
  } finally {
    await cleanUp(dir);
  }
});
