/**
 * The parts of a streamed delta turn (core/delta): the exact reader over a fetch body (a byte
 * stream with a BYOB reader, and a plain stream), and the upload source tus reads its windows
 * from (a window asked again after a drop is served from what it holds, each piece is asked for
 * once and released once).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ExactReader, StreamEndedError } from '../../core/delta/exact-reader.ts';
import { StreamedUploadSource } from '../../core/delta/streamed-upload-source.ts';
import { DeltaInputsError, startStreamedDelta } from '../../core/delta/streamed-delta.ts';

const bytes = (length: number, from = 0): Uint8Array => Uint8Array.from({ length }, (_, i) => (from + i) % 251);

/** A body delivering `data` in network-sized chunks of `chunk` bytes, as a byte stream or a plain one. */
function body(data: Uint8Array, chunk: number, byteStream: boolean): ReadableStream<Uint8Array> {
  let at = 0;
  if (!byteStream) {
    return new ReadableStream<Uint8Array>({
      pull(controller) {
        if (at >= data.byteLength) return controller.close();
        controller.enqueue(data.slice(at, at + chunk));
        at += chunk;
      },
    });
  }
  return new ReadableStream({
    type: 'bytes',
    pull(controller) {
      if (at >= data.byteLength) {
        controller.close();
        controller.byobRequest?.respond(0);
        return;
      }
      controller.enqueue(data.slice(at, at + chunk));
      at += chunk;
    },
  }) as ReadableStream<Uint8Array>;
}

for (const byteStream of [true, false]) {
  test(`ExactReader reads exact lengths across chunk edges (${byteStream ? 'BYOB' : 'plain'} stream)`, async () => {
    const data = bytes(10_000);
    const counts: number[] = [];
    const reader = new ExactReader(body(data, 1500, byteStream), (received) => counts.push(received));
    const first = await reader.read(12);
    const second = await reader.readInto(new Uint8Array(new ArrayBuffer(8192), 0, 4000));
    assert.deepEqual([...first], [...data.subarray(0, 12)]);
    assert.deepEqual([...second], [...data.subarray(12, 4012)]);
    const rest = await reader.read(10_000 - 4012);
    assert.deepEqual([...rest], [...data.subarray(4012)]);
    assert.equal(await reader.atEnd(), true);
    assert.equal(counts.at(-1), 10_000, 'every byte counted once');
    const short = new ExactReader(body(bytes(100), 40, byteStream));
    await assert.rejects(short.read(101), StreamEndedError);
  });
}

test('StreamedUploadSource serves tus its windows, again after a drop, asking each piece once', async () => {
  const pieces = [bytes(300, 0), bytes(500, 300), bytes(200, 800), bytes(1000, 1000)];
  const whole = bytes(2000, 0);
  let asked = 0;
  const released: number[] = [];
  const source = new StreamedUploadSource(
    {
      next: async () => pieces[asked++],
      release: (piece) => released.push(piece.byteLength),
    },
    2000,
    700,
  );
  const window = async (start: number, end: number): Promise<number[]> => {
    const { value } = await source.slice(start, end);
    return [...(value ?? [])];
  };
  assert.deepEqual(await window(0, 700), [...whole.subarray(0, 700)]);
  // The request from 0 dropped after the coordinator kept 450 bytes: resent from its offset.
  assert.deepEqual(await window(450, 1150), [...whole.subarray(450, 1150)]);
  assert.deepEqual(await window(1150, 1850), [...whole.subarray(1150, 1850)]);
  assert.deepEqual(await window(1850, 2550), [...whole.subarray(1850, 2000)]);
  assert.equal(asked, 5, 'four pieces and the end, each asked for once');
  assert.deepEqual(released, [300, 500, 200, 1000], 'each piece released once it is copied');
  await assert.rejects(source.slice(100, 800), /outside what this turn holds/);
});

test('inputs that list L before the history are refused before any secret is drawn', async () => {
  // A zkey binfile whose sections come 1, 8, 10, 9: L before the history, as an older coordinator sends it.
  const section = (id: number, size: number): Uint8Array => {
    const bytes = new Uint8Array(12 + size);
    new DataView(bytes.buffer).setUint32(0, id, true);
    new DataView(bytes.buffer).setBigUint64(4, BigInt(size), true);
    return bytes;
  };
  const head = new Uint8Array(12);
  head.set([0x7a, 0x6b, 0x65, 0x79]);
  new DataView(head.buffer).setUint32(4, 1, true);
  new DataView(head.buffer).setUint32(8, 4, true);
  const file = Uint8Array.from([...head, ...section(1, 4), ...section(8, 64), ...section(10, 68), ...section(9, 64)]);
  let recorded = false;
  await assert.rejects(
    startStreamedDelta({
      reader: new ExactReader(body(file, 10, false)),
      scaler: { workers: 1, scaleOne: async (points) => points },
      makeRecord: async () => {
        recorded = true;
        throw new Error('never');
      },
    }),
    (error) =>
      error instanceof DeltaInputsError && /not in the order a streamed contribution reads/.test(error.message),
  );
  assert.equal(recorded, false, 'no record is made on inputs in the wrong order');
});
