import { describe, expect, it } from 'vitest';
import { opaqueNoise, referenceJpegEncode } from '../../../test/support/image-testing';
import { frameSource, readBands } from '../../../test/support/row-sources';

import { newRun, withRunContext } from '../run-context';
import { encodeWholeAvif } from '../../../test/support/avif-whole-encode';
import { avifEncoderWith } from '../formats/avif/encode';
import { encodeWebp } from '../formats/webp/encode';
import { WasmLedger } from './wasm-memory';
import { openDecode } from '../../../test/support/formats';
import { encodeToBytes } from '../result-buffer';

/*
 * Long calls inside the codecs (a WebP encode, the scans of a progressive JPEG, an AV1 frame) reach
 * the run's yield points from inside WebAssembly (codecs/common/yield.h through JSPI), and calls
 * the codecs make one piece at a time (AVIF tiles, both ways) yield between the pieces: with other
 * requests in the isolate, they take a turn every few milliseconds of work, not only between bands.
 */


/** How many turns `job` took, with other requests always in the isolate. */
async function yieldsDuring(job: () => Promise<unknown>): Promise<number> {
  let yields = 0;
  const share = {
    contended: () => true,
    turn: async () => {
      yields++;
    },
  };
  await withRunContext(newRun(new WasmLedger(), share), job);
  return yields;
}

describe('yield points inside codec calls', () => {
  const image = opaqueNoise(2000, 1500);

  it('a WebP encode of 3 MP yields many times from inside libwebp', async () => {
    const yields = await yieldsDuring(() => encodeWebp(frameSource(image, { alpha: false }, () => {}, image.height), { quality: 80, orientation: 1 }));
    expect(yields).toBeGreaterThanOrEqual(10);
  });

  it('a progressive JPEG of 3 MP yields while libjpeg reads its scans', async () => {
    const jpeg = await referenceJpegEncode(image, 80, true);
    // The whole image arrives as one band once the scans are read: every yield happened inside libjpeg.
    const yields = await yieldsDuring(async () => {
      const source = await openDecode(jpeg, { shrink: 1, region: null });
      source.close();
    });
    expect(yields).toBeGreaterThanOrEqual(5);
  });

  it('a single-image AVIF of 3 MP yields while dav1d decodes it', async () => {
    const avif = await encodeWholeAvif(image, 60);
    const yields = await yieldsDuring(async () => void (await readBands(await openDecode(avif, { shrink: 1, region: null }))));
    expect(yields).toBeGreaterThanOrEqual(2);
  });

  it('an AVIF result of 3 MP yields between its tiles, and its grid yields while dav1d decodes the tiles', async () => {
    let avif: Uint8Array = new Uint8Array(0);
    const encodeYields = await yieldsDuring(async () => {
      avif = await encodeToBytes(avifEncoderWith({}), frameSource(image, { alpha: false }), { quality: 60, orientation: 1 });
    });
    expect(encodeYields).toBeGreaterThanOrEqual(12); // 12 tiles of 504 px (500 x 375 here), each ~70 ms of work
    const decodeYields = await yieldsDuring(async () => void (await readBands(await openDecode(avif, { shrink: 1, region: null }))));
    expect(decodeYields).toBeGreaterThanOrEqual(12);
  });
});
