/**
 * The compiler record and the verifier sources: `ceremony finalise` commits their hashes in the
 * `finalised` entry, the record is held to a documented set of settings, and the audit's
 * `manifest` finding (core/audit/check-verifier-files.ts) refuses a record or a source that is not
 * the committed one, a committed source that is not the final key's verifier, and a `finalised`
 * entry that commits neither.
 */
import assert from 'node:assert/strict';
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { checkVerifierFiles, type CommittedVerifierFiles } from '../../core/audit/check-verifier-files.ts';
import { hashBytes } from '../../core/crypto/file-hash.ts';
import type { CoordinatorError } from '../../core/errors.ts';
import {
  parseAuditorCompilerSettings,
  parseVerifierCompilerRecord,
} from '../../core/finalise/verifier-compiler-record.ts';
import { parseTranscript } from '../../core/transcript/transcript.ts';
import {
  auditorConfigOf,
  copyCeremony,
  devPtauHash,
  finalisedCeremony,
  TWO_CIRCUITS,
} from '../fixtures/ceremony-fixture.ts';
import { cleanUp } from '../helpers/clean-up.ts';
import { rewriteTranscript } from '../helpers/forge-transcript.ts';
import { auditCeremony } from '../../core/audit/audit-ceremony.ts';

let dir: string;
let committed: CommittedVerifierFiles;
let finalKeys: Map<string, object>;
let record: string;

before(async () => {
  const fixture = await finalisedCeremony(TWO_CIRCUITS);
  dir = await copyCeremony(fixture.dataDir);
  const text = await readFile(path.join(dir, 'transcript', 'transcript.jsonl'), 'utf8');
  const finalised = parseTranscript(text, fixture.config.id).at(-1)!;
  assert.equal(finalised.type, 'finalised');
  committed = finalised as CommittedVerifierFiles;
  finalKeys = new Map();
  for (const { name, verifier } of fixture.circuits) {
    finalKeys.set(verifier, JSON.parse(await readFile(path.join(dir, 'final', `${name}.vkey.json`), 'utf8')));
  }
  record = await readFile(path.join(dir, 'final', 'compiler.json'), 'utf8');
});

after(() => cleanUp(dir));

const finalFile = (name: string) => path.join(dir, 'final', name);
const refusal = (code: string, message: RegExp) => (error: CoordinatorError) => {
  assert.equal(error.code, code);
  assert.match(error.message, message);
  return true;
};

describe('finalise commits the verifier files', () => {
  test('the finalised entry hashes compiler.json and each Verifier*.sol', async () => {
    assert.equal(committed.compilerRecordHash, hashBytes(await readFile(finalFile('compiler.json'))));
    assert.deepEqual(Object.keys(committed.verifierSourceHashes ?? {}), ['VerifierRegister', 'VerifierTransact21']);
    for (const [verifier, hash] of Object.entries(committed.verifierSourceHashes!))
      assert.equal(hash, hashBytes(await readFile(finalFile(`${verifier}.sol`))));
  });

  test('the audit finding passes on the honest files', async () => {
    const summary = await checkVerifierFiles(path.join(dir, 'final'), committed, finalKeys);
    assert.match(summary, /^final\/compiler\.json \(solc 0\.8\.\d+ \{.*\}\) and the 2 verifier sources are the ones/);
  });
});

describe("the audit's check of the verifier files refuses", () => {
  test('a finalised entry that commits neither file: audit.verifier_files_uncommitted', async () => {
    await assert.rejects(
      checkVerifierFiles(path.join(dir, 'final'), {}, finalKeys),
      refusal('audit.verifier_files_uncommitted', /commits no compiler record or verifier sources/),
    );
  });

  test('a compiler record other than the committed one', async () => {
    const other = record.replace('"runs": 200', '"runs": 201');
    assert.notEqual(other, record);
    await writeFile(finalFile('compiler.json'), other);
    try {
      await assert.rejects(
        checkVerifierFiles(path.join(dir, 'final'), committed, finalKeys),
        refusal('audit.verifier_files_mismatch', /compiler\.json is not the record the transcript commits/),
      );
    } finally {
      await writeFile(finalFile('compiler.json'), record);
    }
  });

  test('a committed record listing other verifiers', async () => {
    const parsed = JSON.parse(record) as { verifiers: Record<string, unknown> };
    const other = JSON.stringify({ ...parsed, verifiers: { VerifierRegister: parsed.verifiers.VerifierRegister } });
    await writeFile(finalFile('compiler.json'), other);
    try {
      await assert.rejects(
        checkVerifierFiles(path.join(dir, 'final'), { ...committed, compilerRecordHash: hashBytes(other) }, finalKeys),
        refusal(
          'audit.verifier_files_mismatch',
          /lists 1 verifiers, not the ceremony's VerifierRegister, VerifierTransact21/,
        ),
      );
    } finally {
      await writeFile(finalFile('compiler.json'), record);
    }
  });

  test('a source edited, and a committed source that is not the final key’s verifier', async () => {
    const file = finalFile('VerifierTransact21.sol');
    const honest = await readFile(file, 'utf8');
    const edited = honest.replace('contract VerifierTransact21', 'contract VerifierTransact21 /* forged */');
    await writeFile(file, edited);
    try {
      await assert.rejects(
        checkVerifierFiles(path.join(dir, 'final'), committed, finalKeys),
        refusal('audit.verifier_files_mismatch', /VerifierTransact21\.sol is not the source the transcript commits/),
      );
      const recommitted = {
        ...committed,
        verifierSourceHashes: { ...committed.verifierSourceHashes, VerifierTransact21: hashBytes(edited) },
      };
      await assert.rejects(
        checkVerifierFiles(path.join(dir, 'final'), recommitted, finalKeys),
        refusal('audit.verifier_files_mismatch', /VerifierTransact21\.sol is not the verifier snarkjs renders/),
      );
    } finally {
      await writeFile(file, honest);
    }
  });
});

describe('the whole audit', () => {
  test('a finalised entry without the hashes (a downgrade): the manifest finding fails, exit 1', async () => {
    const legacy = await copyCeremony(dir);
    try {
      await rewriteTranscript(legacy, (entries) =>
        entries.map((e) => {
          if (e.type !== 'finalised') return e;
          const { compilerRecordHash: _record, verifierSourceHashes: _sources, ...rest } = e;
          return rest;
        }),
      );
      const report = await auditCeremony(legacy, undefined, {
        noQueueLog: true,
        ptauHash: await devPtauHash(),
        auditorConfig: auditorConfigOf(legacy),
      });
      assert.equal(report.ok, false);
      const manifest = report.findings.find((f) => f.subject === 'manifest')!;
      assert.equal(manifest.code, 'audit.verifier_files_uncommitted');
      assert.deepEqual(
        report.findings.filter((f) => !f.ok).map((f) => f.subject),
        ['manifest'],
      );
    } finally {
      await cleanUp(legacy);
    }
  });
});

describe('the compiler record holds the documented settings only', () => {
  const recordWith = (change: (r: Record<string, unknown>) => object) =>
    JSON.stringify(change(JSON.parse(record) as Record<string, unknown>));
  const cases: Array<[string, (r: Record<string, unknown>) => object, RegExp]> = [
    [
      'another solc release',
      (r) => ({ ...r, compiler: { name: 'solc', version: '0.8.20' } }),
      /must be the solc release this project ships/,
    ],
    [
      'a field beside the settings',
      (r) => ({ ...r, settings: { ...(r.settings as object), viaIR: true } }),
      /settings has a field outside the documented set/,
    ],
    [
      'remappings',
      (r) => ({ ...r, settings: { ...(r.settings as object), remappings: ['a=b'] } }),
      /outside the documented set/,
    ],
    [
      'optimizer details',
      (r) => ({ ...r, settings: { ...(r.settings as object), optimizer: { enabled: true, runs: 200, details: {} } } }),
      /settings\.optimizer has a field/,
    ],
    [
      'runs 0',
      (r) => ({ ...r, settings: { ...(r.settings as object), optimizer: { enabled: true, runs: 0 } } }),
      /settings\.optimizer\.runs/,
    ],
    [
      'an EVM version off the list',
      (r) => ({ ...r, settings: { ...(r.settings as object), evmVersion: 'homestead' } }),
      /settings\.evmVersion/,
    ],
    ['a top-level field', (r) => ({ ...r, libraries: {} }), /the record has a field outside the documented set/],
    [
      'a verifier under a path',
      (r) => ({ ...r, verifiers: { VerifierRegister: { source: '../x.sol', contract: 'VerifierRegister' } } }),
      /verifiers\.VerifierRegister\.source/,
    ],
  ];
  for (const [what, change, message] of cases) {
    test(`${what}: compiler.record_invalid`, () => {
      assert.throws(() => parseVerifierCompilerRecord(recordWith(change)), refusal('compiler.record_invalid', message));
    });
  }

  test('a record far larger than any, or not JSON: compiler.record_invalid, its message bounded', () => {
    const huge = JSON.stringify({ ...JSON.parse(record), padding: 'x'.repeat(100_000) });
    assert.throws(
      () => parseVerifierCompilerRecord(huge),
      refusal('compiler.record_invalid', /far larger than any record/),
    );
    assert.throws(
      () => parseVerifierCompilerRecord(`{"${'k'.repeat(5000)}": 1`),
      (error: CoordinatorError) => {
        assert.equal(error.code, 'compiler.record_invalid');
        assert.ok(error.message.length < 400, error.message);
        return true;
      },
    );
  });

  test("the auditor's --compiler-settings: the same bounds, a usage error otherwise", () => {
    const { compiler, settings } = JSON.parse(record) as { compiler: { version: string }; settings: object };
    const given = parseAuditorCompilerSettings(JSON.stringify({ version: compiler.version, ...settings }));
    assert.deepEqual(given, { version: compiler.version, settings });
    assert.throws(
      () => parseAuditorCompilerSettings(JSON.stringify({ version: compiler.version, ...settings, viaIR: true })),
      refusal('usage.invalid_arguments', /--compiler-settings must be JSON like/),
    );
  });
});
