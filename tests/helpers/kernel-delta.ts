/**
 * A contribution made by the kernel on a head's inputs (its skeleton), in the order the streaming
 * clients send it: zkey-delta-v2, the new record before L and H. contributeFast writes ascending
 * section ids (v1's order); that file, `ascending`, stays for the tests that send or splice v1.
 */
import { readFile } from 'node:fs/promises';
import { contributeFast } from '../../core/kernel/contribute-fast.ts';
import { inDeltaV2Order } from './zkey-tamper.ts';

export async function kernelDelta(
  inputs: string,
  ascending: string,
  name: string,
  entropy = 'typed entropy',
): Promise<Buffer> {
  await contributeFast(inputs, ascending, name, entropy, { workers: 2 });
  return inDeltaV2Order(await readFile(ascending));
}
