/**
 * A prepared ptau made by snarkjs alone, as its CLI makes one (powersoftau new, beacon, prepare
 * phase2), with a fixed beacon under the contributor name `name`: another secret than the
 * development ptau's. Written to DIR/NAME.ptau (its two steps beside it); returns that path.
 */
import path from 'node:path';
import * as snarkjs from 'snarkjs';
import { getBn128 } from '../../core/crypto/bn128.ts';

export async function snarkjsPtau(dir: string, name: string, power: number): Promise<string> {
  const [empty, beacon, prepared] = ['-0', '-1', ''].map((step) => path.join(dir, `${name}${step}.ptau`)) as [
    string,
    string,
    string,
  ];
  await snarkjs.powersOfTau.newAccumulator(await getBn128(), power, empty);
  await snarkjs.powersOfTau.beacon(
    empty,
    beacon,
    name,
    '0102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f20',
    10,
  );
  await snarkjs.powersOfTau.preparePhase2(beacon, prepared);
  return prepared;
}
