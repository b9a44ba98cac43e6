/**
 * The curve and snarkjs's verification key are typed once, in types/snarkjs.d.ts, for every caller
 * (no local patches, no casts through unknown). Those typings are only as good as their match with
 * the run-time objects, so this reads the declarations themselves and checks every member they
 * name on the curve ffjavascript builds and on a key snarkjs exports: each method a function, each
 * other member present.
 */
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import * as snarkjs from 'snarkjs';
import ts from 'typescript';
import { getBn128, releaseBn128 } from '../../core/crypto/bn128.ts';
import { finalisedCeremony } from '../fixtures/ceremony-fixture.ts';

after(() => releaseBn128());

const DECLARATIONS = path.resolve(import.meta.dirname, '..', '..', 'types', 'snarkjs.d.ts');

/** The members each interface of `declare module '<moduleName>'` declares: name → is it a method. */
function declaredMembers(moduleName: string): Map<string, Map<string, boolean>> {
  const source = ts.createSourceFile(DECLARATIONS, readFileSync(DECLARATIONS, 'utf8'), ts.ScriptTarget.Latest, true);
  const interfaces = new Map<string, Map<string, boolean>>();
  source.forEachChild((node) => {
    if (!ts.isModuleDeclaration(node) || node.name.text !== moduleName || !node.body) return;
    node.body.forEachChild((statement) => {
      if (!ts.isInterfaceDeclaration(statement)) return;
      const members = new Map<string, boolean>();
      for (const member of statement.members) {
        if (member.name && (ts.isIdentifier(member.name) || ts.isStringLiteral(member.name)))
          members.set(member.name.text, ts.isMethodSignature(member));
      }
      interfaces.set(statement.name.text, members);
    });
  });
  return interfaces;
}

test('every member the curve typings declare is on the curve ffjavascript builds', async () => {
  const curve = await getBn128();
  const declared = declaredMembers('ffjavascript');
  const objects: Record<string, Array<[string, object]>> = {
    Bn128Curve: [['curve', curve]],
    CurveGroup: [
      ['curve.G1', curve.G1],
      ['curve.G2', curve.G2],
    ],
    ScalarField: [['curve.Fr', curve.Fr]],
    ThreadManager: [['curve.tm', curve.tm]],
  };
  assert.deepEqual([...declared.keys()].sort(), Object.keys(objects).sort(), 'an interface this test does not check');
  const missing: string[] = [];
  for (const [name, members] of declared) {
    assert.ok(members.size > 3, `${name} declares its members`);
    for (const [label, object] of objects[name] ?? []) missing.push(...missingMembers(label, object, members));
  }
  assert.deepEqual(missing, []);
});

test('every member the verification key typing declares is in the key snarkjs exports', async () => {
  const { finalDir, circuits } = await finalisedCeremony();
  const vkey = await snarkjs.zKey.exportVerificationKey(path.join(finalDir, `${circuits[0]?.name}.zkey`));
  const members = declaredMembers('snarkjs').get('VerificationKey');
  assert.ok(members && members.size > 5, 'VerificationKey declares its members');
  assert.deepEqual(missingMembers('vkey', vkey, members), []);
});

/** The members of `object` that are not there, or not functions where a method is declared. */
function missingMembers(label: string, object: object, members: Map<string, boolean>): string[] {
  return [...members]
    .filter(([member, isMethod]) => {
      const value: unknown = Reflect.get(object, member);
      return isMethod ? typeof value !== 'function' : value === undefined;
    })
    .map(([member]) => `${label}.${member}`);
}
