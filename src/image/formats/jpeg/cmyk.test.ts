import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { decodeWith, fixture, mutated } from '../../../../test/support/image-testing';
import { concat } from '../../bytes';
import { jpegSegments, readJpegHeader } from './header';
import { isCmyk, type CmykImage } from '../../types';

const APP14 = 0xee;
/** The 4-component test images of test/fixtures/cmyk (see test/fixtures/make-cmyk-fixtures.ts), 96x64 each. */
const CMYK_FIXTURES = ['cmyk-adobe.jpg', 'cmyk-noprofile.jpg', 'cmyk-progressive.jpg', 'ycck-adobe.jpg', 'ycck-420.jpg'];
const CMYK_FIXTURE_SIZE = { width: 96, height: 64 };
const cmykFixture = (name: string) => fixture(`cmyk/${name}`);

const decodeJpeg = (bytes: Uint8Array) => decodeWith('jpeg', bytes);

async function decodeCmyk(bytes: Uint8Array): Promise<CmykImage> {
  const image = await decodeJpeg(bytes);
  if (!isCmyk(image)) throw new Error('expected a CmykImage');
  return image;
}

/** Ink (C, M, Y, K) of one pixel. */
function inkAt(image: CmykImage, x: number, y: number): number[] {
  const i = (y * image.width + x) * 4;
  return [...image.data.subarray(i, i + 4)];
}

function withoutAdobeMarker(bytes: Uint8Array): Uint8Array {
  const parts: Uint8Array[] = [bytes.subarray(0, 2)];
  for (const segment of jpegSegments(bytes)) {
    if (segment.marker !== APP14) parts.push(bytes.subarray(segment.start, segment.end));
  }
  return concat(parts);
}

/** Runs `decode` and reports how it ended and how long it took; never lets it pass silently. */
async function outcome(bytes: Uint8Array): Promise<{ threw: boolean; ms: number }> {
  const started = performance.now();
  try {
    await decodeJpeg(bytes);
    return { threw: false, ms: performance.now() - started };
  } catch {
    return { threw: true, ms: performance.now() - started };
  }
}

describe('JPEG decoder: CMYK and YCCK (libjpeg)', () => {
  it.each(CMYK_FIXTURES)('%s decodes to a CmykImage of the stored size', async (name) => {
    const image = await decodeCmyk(await cmykFixture(name));
    expect(image.colorModel).toBe('cmyk');
    expect({ width: image.width, height: image.height }).toEqual(CMYK_FIXTURE_SIZE);
    expect(image.data).toBeInstanceOf(Uint8Array);
    expect(image.data.length).toBe(image.width * image.height * 4);
  });

  it('returns ink amounts (0 = no ink), with the Adobe inversion undone', async () => {
    // Made with the test profile, whose inks are ideal; cmyk-noprofile.jpg went through a real press profile.
    for (const name of CMYK_FIXTURES.filter((fixture) => fixture !== 'cmyk-noprofile.jpg')) {
      const image = await decodeCmyk(await cmykFixture(name));
      // The top row is red, green, blue, cyan, magenta, yellow patches, 16 pixels wide.
      const [red, green, blue, cyan, magenta, yellow] = [8, 24, 40, 56, 72, 88].map((x) => inkAt(image, x, 8));
      const much = expect.toSatisfy((v: number) => v > 200);
      const little = expect.toSatisfy((v: number) => v < 40);
      expect({ name, red, green, blue, cyan, magenta, yellow }).toEqual({
        name,
        red: [little, much, much, little],
        green: [much, little, much, little],
        blue: [much, much, little, little],
        cyan: [much, little, little, little],
        magenta: [little, much, little, little],
        yellow: [little, little, much, little],
      });
      // The bottom rows are a grey ramp: black on the left, no ink on the right.
      expect(inkAt(image, 0, 60)[3], name).toBeGreaterThan(100);
      expect(Math.max(...inkAt(image, 95, 60)), name).toBeLessThan(12);
    }
    const pressed = await decodeCmyk(await cmykFixture('cmyk-noprofile.jpg'));
    expect(inkAt(pressed, 8, 8)).toEqual([0, 255, 255, 0]); // sRGB red: full magenta and yellow
    expect(inkAt(pressed, 95, 60)).toEqual([0, 0, 0, 0]); // white: no ink
  });

  it('decodes the YCCK files to the same ink as the CMYK file they were made from', async () => {
    const cmyk = await decodeCmyk(await cmykFixture('cmyk-adobe.jpg'));
    for (const name of ['ycck-adobe.jpg', 'ycck-420.jpg'] as const) {
      const ycck = await decodeCmyk(await cmykFixture(name));
      let sum = 0;
      for (let i = 0; i < cmyk.data.length; i++) sum += Math.abs(cmyk.data[i] - ycck.data[i]);
      // Both are lossy copies of one CMYK picture; 4:2:0 also loses chroma detail at patch edges.
      expect(sum / cmyk.data.length, name).toBeLessThan(name === 'ycck-adobe.jpg' ? 1.5 : 6);
    }
  });

  it('decodes a progressive CMYK JPEG to the same ink as the baseline one', async () => {
    const baseline = await decodeCmyk(await cmykFixture('cmyk-adobe.jpg'));
    const progressive = await decodeCmyk(await cmykFixture('cmyk-progressive.jpg'));
    let max = 0;
    for (let i = 0; i < baseline.data.length; i++) max = Math.max(max, Math.abs(baseline.data[i] - progressive.data[i]));
    expect(max).toBeLessThanOrEqual(2); // same quantised coefficients, coded differently
  });

  it('reads a 4-component JPEG whose Adobe marker was lost like one that has it (as libvips does)', async () => {
    const original = await cmykFixture('cmyk-noprofile.jpg');
    const bytes = withoutAdobeMarker(original);
    expect(readJpegHeader(bytes).frame.components).toBe(4);
    expect((await decodeCmyk(bytes)).data).toEqual((await decodeCmyk(original)).data);
  });

  it('throws quickly on truncated CMYK and YCCK files', async () => {
    for (const name of ['cmyk-adobe.jpg', 'cmyk-progressive.jpg', 'ycck-420.jpg'] as const) {
      const bytes = (await cmykFixture(name));
      for (let length = 0; length < bytes.length; length += 7) {
        const { threw, ms } = await outcome(bytes.subarray(0, length));
        expect({ name, length, threw }).toEqual({ name, length, threw: true });
        expect(ms, `${name} cut to ${length} bytes`).toBeLessThan(1000);
      }
    }
  });

  it('never hangs on damaged CMYK files: each decode ends, with an image or an error', async () => {
    const bytes = (await cmykFixture('ycck-adobe.jpg'));
    await fc.assert(
      fc.asyncProperty(mutated(bytes, 2048), async (damaged) => {
        const { ms } = await outcome(damaged);
        expect(ms).toBeLessThan(5000);
      }),
      { numRuns: 150, seed: 20261122 },
    );
  });
});

describe('JPEG decoder: a CMYK file whose data asks for more than its frame header', () => {
  it('refuses a drifting DQT that would reveal a 20000x20000 frame hidden in an APP15 segment', async () => {
    const file = await cmykFixture('cmyk-noprofile.jpg');
    // A DQT whose length holds an 8-bit table but whose spec byte says 16-bit: a reader that trusts
    // the spec reads 64 bytes on, into the APP15 payload, where a frame header waits at that offset.
    const dqt = [0xff, 0xdb, 0x00, 67, 0x10, ...new Array(64).fill(1)];
    const hiddenSof = [0xff, 0xc0, 0x00, 20, 8, 0x4e, 0x20, 0x4e, 0x20, 4, 1, 0x11, 0, 2, 0x11, 0, 3, 0x11, 0, 4, 0x11, 0];
    const payload = [...new Array(60).fill(0), ...hiddenSof, ...new Array(16).fill(0)];
    const app15 = [0xff, 0xef, 0x00, payload.length + 2, ...payload];
    const hostile = concat([file.subarray(0, 2), new Uint8Array([...dqt, ...app15]), file.subarray(2)]);
    const started = performance.now();
    await expect(decodeJpeg(hostile)).rejects.toMatchObject({ code: 'UNSUPPORTED_FORMAT' });
    expect(performance.now() - started).toBeLessThan(3000);
  });
});

describe('JPEG decoder: grey', () => {
  it('decodes a greyscale JPEG to RGBA', async () => {
    const image = await decodeJpeg(await cmykFixture('grey-noprofile.jpg'));
    expect(isCmyk(image)).toBe(false);
    expect(image.data.length).toBe(96 * 64 * 4);
    const i = (60 * 96 + 95) * 4; // right end of the grey ramp: white
    expect([...image.data.subarray(i, i + 4)].map((v) => v > 240)).toEqual([true, true, true, true]);
    const j = (60 * 96 + 48) * 4;
    expect(image.data[j]).toBe(image.data[j + 1]);
    expect(image.data[j]).toBe(image.data[j + 2]);
  });
});
