/** Reads the header of a circuit's r1cs: what the ceremony needs to check it against its config. */
import * as binFileUtils from '@iden3/binfileutils';
import { readR1csHeader } from 'r1csfile';
import { CoordinatorError } from '../errors.ts';

export interface R1csSummary {
  nConstraints: number;
  nVars: number;
  /** Public signals as Groth16 sees them: outputs plus public inputs. */
  publicInputs: number;
  prime: bigint;
}

export async function readR1csSummary(r1csPath: string): Promise<R1csSummary> {
  let file: Awaited<ReturnType<typeof binFileUtils.readBinFile>>;
  try {
    // Pages of 64 KiB: only the section table and the header are read, and fastfile allocates (and
    // zeroes) a whole page for its first read; at 16 MiB that was about 10 ms a call.
    file = await binFileUtils.readBinFile(r1csPath, 'r1cs', 1, 1 << 22, 1 << 16);
  } catch (error) {
    throw new CoordinatorError('r1cs.malformed', `cannot read r1cs ${r1csPath}: ${(error as Error).message}`);
  }
  try {
    // r1csfile asks for a field to go with the prime, and only returns it: the prime alone will do.
    // Without a factory it builds a whole curve with worker threads (from its own ffjavascript
    // copy), which keep the process alive; ffjavascript's F1Field costs about 50 ms to build, more
    // than the rest of the read.
    const header = await readR1csHeader(file.fd, file.sections, {
      getFieldFromPrime: async (prime: bigint) => ({ p: prime }),
    });
    return {
      nConstraints: header.nConstraints,
      nVars: header.nVars,
      publicInputs: header.nOutputs + header.nPubInputs,
      prime: BigInt(header.prime),
    };
  } catch (error) {
    throw new CoordinatorError(
      'r1cs.malformed',
      `cannot read the header of r1cs ${r1csPath}: ${(error as Error).message}`,
    );
  } finally {
    await file.fd.close();
  }
}

/**
 * The power of the evaluation domain snarkjs uses for a circuit (the ptau must have at least
 * this power): the smallest 2^p above constraints + public signals.
 */
export function requiredPtauPower(summary: R1csSummary): number {
  return Math.ceil(Math.log2(summary.nConstraints + summary.publicInputs + 1));
}
