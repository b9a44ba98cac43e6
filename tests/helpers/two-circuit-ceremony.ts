/**
 * The audit tests' ceremony: the cached two-circuit finalised ceremony (TWO_CIRCUITS), made before
 * a test file's tests, with copies of it to tamper with, removed after them. Call once at the top
 * level of a test file: it registers the file's before and after hooks.
 */
import { after, before } from 'node:test';
import { releaseBn128 } from '../../core/crypto/bn128.ts';
import { closeMultiExp } from '../../core/kernel/multi-exp.ts';
import {
  auditorConfigOf,
  copyCeremony,
  finalisedCeremony,
  TWO_CIRCUITS,
  type FinalisedCeremony,
} from '../fixtures/ceremony-fixture.ts';
import { cleanUp } from './clean-up.ts';

export interface TwoCircuitCeremony {
  /** The untouched ceremony (set once the file's before hook ran). */
  readonly published: FinalisedCeremony;
  /** Every folder copy() made, oldest first; also where a test may add its own to be removed. */
  readonly copies: string[];
  /** The published ceremony once made: for a before hook of the file's own, which may run beside this one's. */
  ready(): Promise<FinalisedCeremony>;
  /** A fresh copy of the published folder, removed after the file's tests. */
  copy(): Promise<string>;
  /** The auditor's ceremony.json of the untouched ceremony. */
  auditorConfig(): string;
}

export function twoCircuitCeremony(): TwoCircuitCeremony {
  let published: FinalisedCeremony | undefined;
  let making: Promise<FinalisedCeremony> | undefined;
  const copies: string[] = [];
  const ready = (): Promise<FinalisedCeremony> =>
    (making ??= finalisedCeremony(TWO_CIRCUITS).then((made) => (published = made)));
  before(async () => {
    await ready();
  });
  after(async () => {
    await closeMultiExp();
    await releaseBn128();
    await cleanUp(...copies);
  });
  const fixture: TwoCircuitCeremony = {
    get published(): FinalisedCeremony {
      if (!published) throw new Error('the two-circuit ceremony is made in the before hook');
      return published;
    },
    copies,
    ready,
    async copy() {
      const dir = await copyCeremony(fixture.published.dataDir);
      copies.push(dir);
      return dir;
    },
    auditorConfig: () => auditorConfigOf(fixture.published.dataDir),
  };
  return fixture;
}
