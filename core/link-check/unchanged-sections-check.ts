/**
 * The bytes of a whole key that no contribution may change, compared with the head's as they
 * arrive: section 1 (the protocol), section 2 but δ (its last two points), and sections 3 to 7
 * (IC, coefficients, A, B1, B2). A difference is the key's refusal as soon as the bytes that hold
 * it are in, with the code the end of the upload or the verifier gives for it: section 1
 * `zkey.section_table_mismatch`, section 2 `zkey.malformed` (not bn128's fields),
 * `contribution.wrong_circuit` (its sizes) or `contribution.header_mismatch` (α, β, γ), sections 3
 * to 7 `contribution.header_mismatch`. Those checks stay the authority; this one refuses only
 * what they refuse, sooner.
 *
 * It follows an upload whose section table is being held to the head's (UploadTableCheck, the
 * whole key's TableExpectation): once the upload's entry of a section is read and accepted, the
 * section has the head's size, and its body is compared with the head's where each file's table
 * puts it (a contribution writes its sections in ascending order; contribution 0, snarkjs's
 * `zkey new`, does not). Work is bounded by the head (its sections, never what the upload
 * declares) and memory by two reads of COMPARE_CHUNK; each read is asynchronous, so the event
 * loop is never held for a section.
 */
import { open, type FileHandle } from 'node:fs/promises';
import { CoordinatorError } from '../errors.ts';
import { readExactly, readExactlyInto } from '../binfile/read-exactly.ts';
import type { SectionLocation, SectionTable } from '../binfile/section-table.ts';
import { FIXED_SECTIONS, parseGrothHeader, SECTION } from '../zkey/zkey-file.ts';
import { protocolMismatch } from '../zkey/key-table-check.ts';
import { checkSameHeaderAsHead, fixedSectionMismatch } from './check-link-structure.ts';

/** Bytes compared per read from each file: a PATCH of 8 MiB is compared in 8 steps. */
const COMPARE_CHUNK = 1 << 20;

const HEAD_LABEL = 'the chain head';

/** A section that must be the head's; section 2's last bytes (δ) excepted. */
interface Kept {
  id: number;
  /** Where the head's body starts. */
  headOffset: number;
  size: number;
}

export class UnchangedSectionsCheck {
  private readonly kept: Kept[];
  private index = 0;
  /** How many bytes of `kept[index]` were compared. */
  private compared = 0;
  private head: FileHandle | undefined;
  private buffers: [Buffer, Buffer] | undefined;

  /**
   * `head`: the section table of the verified head at `headPath`; `label` names the upload in
   * refusals (as the end of the upload names it).
   */
  constructor(
    private readonly headPath: string,
    head: SectionTable,
    private readonly label: string,
  ) {
    // In the order a contribution writes them (ascending ids), which the upload's table is held to.
    this.kept = [SECTION.protocol, SECTION.grothHeader, ...FIXED_SECTIONS].map((id) => {
      const { offset, size } = head.sections.get(id)!;
      return { id, headOffset: offset, size };
    });
  }

  /** True once every byte that must be the head's was compared. */
  get done(): boolean {
    return this.index === this.kept.length;
  }

  /**
   * Compares what the first `available` bytes of the upload behind `upload` hold of those sections
   * and was not compared yet; throws the refusal of the first difference. `sections`: where the
   * upload's sections start, by id, for each entry of its table read and held to the head's.
   */
  async advance(upload: FileHandle, available: number, sections: ReadonlyMap<number, SectionLocation>): Promise<void> {
    while (!this.done) {
      const kept = this.kept[this.index]!;
      const at = sections.get(kept.id);
      if (!at) return;
      if (kept.id === SECTION.protocol || kept.id === SECTION.grothHeader) {
        // Small (4 and 660 bytes): compared once whole, to name what differs.
        if (available < at.offset + kept.size) return;
        await this.compareWhole(upload, kept, at.offset);
      } else {
        const end = Math.min(kept.size, available - at.offset);
        while (this.compared < end) {
          const length = Math.min(COMPARE_CHUNK, end - this.compared);
          if (!(await this.sameBytes(upload, at.offset + this.compared, kept.headOffset + this.compared, length)))
            throw fixedSectionMismatch(kept.id);
          this.compared += length;
        }
        if (this.compared < kept.size) return;
      }
      this.index++;
      this.compared = 0;
    }
    await this.close();
  }

  /** Closes the head's file and lets the buffers go: once done, or when the upload is no longer followed. */
  async close(): Promise<void> {
    const head = this.head;
    this.head = undefined;
    this.buffers = undefined;
    await head?.close().catch(() => undefined);
  }

  private async compareWhole(upload: FileHandle, kept: Kept, offset: number): Promise<void> {
    this.head ??= await open(this.headPath, 'r');
    const [ours, heads] = await Promise.all([
      readExactly(upload, offset, kept.size),
      readExactly(this.head, kept.headOffset, kept.size),
    ]);
    if (kept.id === SECTION.protocol) {
      if (!ours.equals(heads)) throw protocolMismatch(this.label);
      return;
    }
    const headHeader = parseGrothHeader(heads, HEAD_LABEL);
    // δ (delta_1, delta_2) ends the section: what a contribution changes there.
    const fixedBytes = headHeader.fixedPart.length;
    if (ours.subarray(0, fixedBytes).equals(heads.subarray(0, fixedBytes))) return;
    // The refusal the end's checks give: not bn128's header at all, or another circuit's, or other α, β, γ.
    checkSameHeaderAsHead(headHeader, parseGrothHeader(ours, this.label));
    // Unreachable: a header parsed to the head's sizes and fixed part has the head's bytes before δ.
    throw new CoordinatorError('contribution.header_mismatch', 'the key header differs from the chain head');
  }

  private async sameBytes(upload: FileHandle, ours: number, heads: number, length: number): Promise<boolean> {
    this.head ??= await open(this.headPath, 'r');
    this.buffers ??= [Buffer.allocUnsafe(COMPARE_CHUNK), Buffer.allocUnsafe(COMPARE_CHUNK)];
    const [a, b] = [this.buffers[0].subarray(0, length), this.buffers[1].subarray(0, length)];
    await Promise.all([readExactlyInto(upload, a, ours), readExactlyInto(this.head, b, heads)]);
    return a.equals(b);
  }
}
