import { beforeAll, describe, expect, it } from 'vitest';
import { AppError, type ErrorCode } from '../../src/errors';
import { concat } from '../../src/image/bytes';
import { FORMATS } from '../../src/image/formats/index';
import { encodeWholeAvif } from '../support/avif-whole-encode';
import { isoBoxes, findBox } from '../../src/image/formats/avif/boxes';
import { pngChunk } from '../../src/image/formats/png/header';
import { riffHeader, webpChunk } from '../../src/image/formats/webp/riff';
import { processImage } from '../../src/image/pipeline';
import { createTestUser, expectFailure, upload } from './helpers';
import { encodeImage, gradient, pngHeaderOnly } from './images';

/**
 * Files whose headers declare a huge size, and files whose headers lie about the size of the data
 * behind them: both must be refused from the header, before any decoder allocates.
 */

const limits = { maxInputPixels: 1_000_000, maxOutputPixels: 1_000_000, memoryBudgetBytes: 100 * 2 ** 20 };
const convert = { steps: [], format: 'png', quality: 80 } as const;

/** Runs the pipeline on `input`, expecting a refusal with `code` well under the time any decode takes. */
async function refused(input: Uint8Array, code: ErrorCode): Promise<AppError> {
  const started = performance.now();
  let error: unknown;
  try {
    await processImage(input, convert, limits);
  } catch (caught) {
    error = caught;
  }
  const elapsed = performance.now() - started;
  expect(error).toBeInstanceOf(AppError);
  expect((error as AppError).code, String((error as AppError).detail)).toBe(code);
  // Refused from the header: milliseconds of work (a decode would take seconds); the bound is for a busy machine.
  expect(elapsed).toBeLessThan(2000);
  return error as AppError;
}

const b64 = (text: string) => Uint8Array.from(atob(text), (c) => c.charCodeAt(0));
/** 16x16 colour JPEGs made with libjpeg-turbo 2.1.5: cjpeg (SOF0), then jpegtran -arithmetic (SOF9, and SOF10 with -progressive). */
const BASELINE_JPEG = b64('/9j/4AAQSkZJRgABAQAAAQABAAD/2wBDAAMCAgMCAgMDAwMEAwMEBQgFBQQEBQoHBwYIDAoMDAsKCwsNDhIQDQ4RDgsLEBYQERMUFRUVDA8XGBYUGBIUFRT/2wBDAQMEBAUEBQkFBQkUDQsNFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBT/wAARCAAQABADASIAAhEBAxEB/8QAHwAAAQUBAQEBAQEAAAAAAAAAAAECAwQFBgcICQoL/8QAtRAAAgEDAwIEAwUFBAQAAAF9AQIDAAQRBRIhMUEGE1FhByJxFDKBkaEII0KxwRVS0fAkM2JyggkKFhcYGRolJicoKSo0NTY3ODk6Q0RFRkdISUpTVFVWV1hZWmNkZWZnaGlqc3R1dnd4eXqDhIWGh4iJipKTlJWWl5iZmqKjpKWmp6ipqrKztLW2t7i5usLDxMXGx8jJytLT1NXW19jZ2uHi4+Tl5ufo6erx8vP09fb3+Pn6/8QAHwEAAwEBAQEBAQEBAQAAAAAAAAECAwQFBgcICQoL/8QAtREAAgECBAQDBAcFBAQAAQJ3AAECAxEEBSExBhJBUQdhcRMiMoEIFEKRobHBCSMzUvAVYnLRChYkNOEl8RcYGRomJygpKjU2Nzg5OkNERUZHSElKU1RVVldYWVpjZGVmZ2hpanN0dXZ3eHl6goOEhYaHiImKkpOUlZaXmJmaoqOkpaanqKmqsrO0tba3uLm6wsPExcbHyMnK0tPU1dbX2Nna4uPk5ebn6Onq8vP09fb3+Pn6/9oADAMBAAIRAxEAPwD4/wDCfwq+xbP3Oc+33f8AGvo3wn8KfsWz9znPtjb/AI17F4T+FP2LZ+5zn2+7/jXf+E/hT9i2fuc59vu/40Zzxh/qLf3ufn+Xsrf+Bc/PzeXJbpb3Dw249+s8nv8A/B/ysf/Z');
const ARITHMETIC_JPEG = b64('/9j/4AAQSkZJRgABAQAAAQABAAD/2wBDAAMCAgMCAgMDAwMEAwMEBQgFBQQEBQoHBwYIDAoMDAsKCwsNDhIQDQ4RDgsLEBYQERMUFRUVDA8XGBYUGBIUFRT/2wBDAQMEBAUEBQkFBQkUDQsNFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBT/yQARCAAQABADASIAAhEBAxEB/8wACgAQEAUBEBEF/9oADAMBAAIRAxEAPwD/ANwbyQR/2HmTA8+tr5HKSWTqzK+5zSDiXCDb4VapvTDxAux0Xj5uf/V9nfweCtHXzaXit2Q0+cu6o/nTNZrPtyLb63UdoVMcikj/2Q==');
const ARITHMETIC_PROGRESSIVE_JPEG = b64('/9j/4AAQSkZJRgABAQAAAQABAAD/2wBDAAMCAgMCAgMDAwMEAwMEBQgFBQQEBQoHBwYIDAoMDAsKCwsNDhIQDQ4RDgsLEBYQERMUFRUVDA8XGBYUGBIUFRT/2wBDAQMEBAUEBQkFBQkUDQsNFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBT/ygARCAAQABADASIAAhEBAxEB/8wABgAQARD/2gAMAwEAAhADEAAAAf8At/8A4F8F/8wABBAF/9oACAEBAAEFAhWo81Gk1tjwhQiLusD/zAAEEQX/2gAIAQMBAT8BFnBJj7CwkP/MAAQRBf/aAAgBAgEBPwE5j8aXTApZG/xaUaCkcVyygP/MAAQQBf/aAAgBAQAGPwJeFP/MAAQQBf/aAAgBAQABPyFUktWnJar4qP/aAAwDAQACAAMAAAAQDP/MAAQRBf/aAAgBAwEBPxDhYCVaHZL/zAAEEQX/2gAIAQIBAT8QqMH+4qJgtxd0/8wABBAF/9oACAEBAAE/EDsTSMK4ebA12uTCSv/Z');

const u32be = (value: number) => [value >>> 24, (value >> 16) & 0xff, (value >> 8) & 0xff, value & 0xff];
const le24 = (value: number) => [value & 0xff, (value >> 8) & 0xff, (value >> 16) & 0xff];
const webp = (...chunks: Uint8Array[]) => {
  const body = concat(chunks);
  return concat([riffHeader(4 + body.length), body]);
};
const vp8x = (width: number, height: number, flags = 0) => webpChunk('VP8X', [flags, 0, 0, 0, ...le24(width - 1), ...le24(height - 1)]);
const vp8l = (width: number, height: number) => {
  const bits = (width - 1) | ((height - 1) << 14);
  return webpChunk('VP8L', [0x2f, bits & 0xff, (bits >> 8) & 0xff, (bits >> 16) & 0xff, bits >>> 24, 0, 0, 0]);
};
const jpegSof = (marker: number, width: number, height: number) =>
  [0xff, marker, 0, 17, 8, height >> 8, height & 0xff, width >> 8, width & 0xff, 3, 1, 0x22, 0, 2, 0x11, 1, 3, 0x11, 1];
/** `bytes` with `insert` placed at `at`. */
const spliced = (bytes: Uint8Array, at: number, insert: ArrayLike<number>) => concat([bytes.subarray(0, at), Uint8Array.from(insert), bytes.subarray(at)]);

/** A copy of an AVIF with the primary ispe set to width x height. */
function withIspe(avif: Uint8Array, width: number, height: number): Uint8Array {
  const copy = avif.slice();
  const meta = findBox(copy, { body: 0, end: copy.length }, 'meta')!;
  const ipco = findBox(copy, findBox(copy, meta, 'iprp', 4)!, 'ipco')!;
  const ispe = [...isoBoxes(copy, ipco.body, ipco.end)].find((box) => box.type === 'ispe')!;
  copy.set([...u32be(width), ...u32be(height)], ispe.body + 4);
  return copy;
}

let avif2048: Uint8Array;

beforeAll(async () => {
  avif2048 = await encodeWholeAvif(gradient(2048, 2048), 50); // a real 4-megapixel AV1 stream, one item (results are grids)
}, 120_000);

describe('headers that declare a huge size are refused with FILE_TOO_LARGE before any decode', () => {
  it('JPEG: a 60000x60000 SOF0', async () => {
    const bomb = concat([BASELINE_JPEG.subarray(0, 2), Uint8Array.from(jpegSof(0xc0, 60000, 60000)), Uint8Array.from([0xff, 0xda, 0, 12, 3, 1, 0, 2, 0x11, 3, 0x11, 0, 63, 0, 0xff, 0xd9])]);
    const error = await refused(bomb, 'FILE_TOO_LARGE');
    expect(error.message).toContain('60000x60000');
  });

  it('PNG: a 60000x60000 IHDR without pixel data', async () => {
    expect((await refused(pngHeaderOnly(60000, 60000), 'FILE_TOO_LARGE')).message).toContain('60000x60000');
  });

  it('WebP: a 16384x16384 VP8L still and a 60000x60000 animation canvas', async () => {
    await refused(webp(vp8x(16384, 16384), vp8l(16384, 16384)), 'FILE_TOO_LARGE');
    await refused(webp(vp8l(16384, 16384)), 'FILE_TOO_LARGE');
    const animation = webp(vp8x(60000, 60000, 0x02), webpChunk('ANIM', [0, 0, 0, 0, 0, 0]));
    expect((await refused(animation, 'FILE_TOO_LARGE')).message).toContain('60000x60000');
  });

  it('AVIF: a real 2048x2048 file, and the same file with a 60000x60000 ispe', async () => {
    expect((await refused(avif2048, 'FILE_TOO_LARGE')).message).toContain('2048x2048');
    expect((await refused(withIspe(avif2048, 60000, 60000), 'FILE_TOO_LARGE')).message).toContain('60000x60000');
  });
});

describe('headers that lie about the size of the data behind them are refused with UNSUPPORTED_FORMAT', () => {
  it('AVIF: an ispe of 64x64 in front of a 2048x2048 AV1 stream', async () => {
    const liar = withIspe(avif2048, 64, 64);
    const error = await refused(liar, 'UNSUPPORTED_FORMAT');
    expect(String(error.detail)).toMatch(/2048x2048.*64x64|64x64.*2048x2048/);
  });

  it('WebP: a 64x64 VP8X canvas in front of a 16000x16000 VP8L bitstream, and an animation frame outside its canvas', async () => {
    const still = await refused(webp(vp8x(64, 64), vp8l(16000, 16000)), 'UNSUPPORTED_FORMAT');
    expect(String(still.detail)).toMatch(/VP8L bitstream is 16000x16000 but the VP8X canvas 64x64/);
    const frame = webpChunk('ANMF', [0, 0, 0, 0, 0, 0, ...le24(3999), ...le24(3999), 0, 0, 0, 0, ...vp8l(4000, 4000)]);
    const animation = await refused(webp(vp8x(64, 64, 0x02), webpChunk('ANIM', [0, 0, 0, 0, 0, 0]), frame), 'UNSUPPORTED_FORMAT');
    expect(String(animation.detail)).toMatch(/frame 4000x4000 at 0,0 outside the 64x64 canvas/);
  });

  it('PNG: an APNG frame (fcTL) larger than IHDR', async () => {
    const png = await encodeImage('png', gradient(8, 8));
    const fcTL = (width: number, height: number) => pngChunk('fcTL', [...u32be(0), ...u32be(width), ...u32be(height), ...u32be(0), ...u32be(0), 0, 1, 0, 10, 0, 0]);
    const acTL = pngChunk('acTL', [...u32be(1), ...u32be(0)]);
    const afterIhdr = 8 + 25;
    const error = await refused(spliced(png, afterIhdr, concat([acTL, fcTL(60000, 60000)])), 'UNSUPPORTED_FORMAT');
    expect(String(error.detail)).toMatch(/APNG frame 60000x60000 at 0,0 outside the 8x8 image/);
    const result = await processImage(spliced(png, afterIhdr, concat([acTL, fcTL(8, 8)])), convert, limits);
    expect([result.width, result.height]).toEqual([8, 8]);
  });

  it('JPEG: a second SOF declaring 60000x60000', async () => {
    const sos = BASELINE_JPEG.findIndex((byte, i) => byte === 0xff && BASELINE_JPEG[i + 1] === 0xda);
    const error = await refused(spliced(BASELINE_JPEG, sos, jpegSof(0xc2, 60000, 60000)), 'UNSUPPORTED_FORMAT');
    expect(String(error.detail)).toMatch(/second SOF/);
  });
});

describe('JPEG frame types', () => {
  it('decodes baseline SOF0 and refuses the arithmetic-coded SOF9 and SOF10 the decoder cannot read', async () => {
    expect(await processImage(BASELINE_JPEG, convert, limits)).toMatchObject({ width: 16, height: 16 });
    for (const input of [ARITHMETIC_JPEG, ARITHMETIC_PROGRESSIVE_JPEG]) {
      const error = await refused(input, 'UNSUPPORTED_FORMAT');
      expect(String(error.detail)).toMatch(/SOF(9|10) \(arithmetic-coded\) JPEGs are not supported/);
    }
  });
});

describe('through the HTTP API', () => {
  it('answers 422 FILE_TOO_LARGE for a pixel bomb and 422 UNSUPPORTED_FORMAT for the lying AVIF, spending nothing', async () => {
    const user = await createTestUser({ plan: 'pro' });
    const bomb = await upload('/api/v1/convert', user.key, pngHeaderOnly(60000, 60000), { format: 'webp' });
    expect((await expectFailure(bomb, 422, 'FILE_TOO_LARGE')).error.message).toContain('60000x60000');
    const liar = await upload('/api/v1/convert', user.key, withIspe(avif2048, 64, 64), { format: 'png' });
    await expectFailure(liar, 422, 'UNSUPPORTED_FORMAT');
  });
});
