/**
 * Compiles the project's test circuits (ceremony-data/circuits/*.circom) with circom2 from npm.
 * The r1cs files are ceremony inputs and are committed next to their sources; a test checks that
 * compiling the sources reproduces them byte for byte. `--wasm DIR` also writes the witness
 * generators (for proving in tests and benchmarks) into DIR.
 *
 * Usage: tsx scripts/build-circuits.ts [--out DIR] [--wasm DIR] [--data DIR]
 */
import { parseArgs } from 'node:util';
import path from 'node:path';
import { compileCircuit } from '../core/setup/compile-circuit.ts';
import { loadCeremonyConfig } from '../core/config/ceremony-config.ts';

const { values } = parseArgs({
  options: { out: { type: 'string' }, wasm: { type: 'string' }, data: { type: 'string', default: 'ceremony-data' } },
});
const config = await loadCeremonyConfig(values.data!);
for (const circuit of config.circuits) {
  const source = circuit.r1csPath.replace(/\.r1cs$/, '.circom');
  const outDir = values.out ? path.resolve(values.out) : path.dirname(circuit.r1csPath);
  const r1cs = await compileCircuit(source, outDir, { wasmDir: values.wasm ? path.resolve(values.wasm) : undefined });
  process.stdout.write(`${circuit.name}: ${path.relative(process.cwd(), r1cs)}\n`);
}
