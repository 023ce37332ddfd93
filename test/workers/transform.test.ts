import { env } from 'cloudflare:test';
import { describe, expect, it } from 'vitest';
import type { ImageFormat } from '../../src/image/types';
import { clockedClient, corpus, createTestUser, download, expectFailure, json, ManualClock, upload, usedToday } from './helpers';
import { decodeImage, encodeImage, gradient } from './images';
import { WebClient } from './web-client';

/*
 * POST /api/v1/transform and the converter's /app/v1/transform: steps chained in one call, one
 * conversion spent, the Result object; bad steps refused with INVALID_PARAMETERS naming the step's
 * index and field, before anything is spent. Pixels against sharp are test/node/steps-vs-sharp.test.ts's.
 */

const steps = (...list: unknown[]) => JSON.stringify(list);

async function resultPixels(response: Response) {
  const body = await json(response);
  if (!body.success) throw new Error(JSON.stringify(body));
  const bytes = new Uint8Array(await (await download(body.data.download_url)).arrayBuffer());
  return { data: body.data, pixels: await decodeImage(body.data.format === 'jpg' ? 'jpeg' : body.data.format, bytes) };
}

describe('POST /api/v1/transform', () => {
  it('crops, rotates and flips in one call: exactly those pixels, one conversion, the Result object', async () => {
    const user = await createTestUser();
    const source = gradient(40, 30);
    // A 20x10 cut at (7, 5), turned a quarter clockwise (10x20), mirrored left to right.
    const response = await upload('/api/v1/transform', user.key, await encodeImage('png', source), {
      steps: steps({ op: 'crop', x: 7, y: 5, width: 20, height: 10 }, { op: 'rotate', angle: 90 }, { op: 'flip', axis: 'horizontal' }),
    }, 'grid.png');
    expect(response.status).toBe(200);
    const { data, pixels } = await resultPixels(response);
    expect(data).toMatchObject({ format: 'png', filename: 'grid.png', width: 10, height: 20 });
    expect(Object.keys(data).sort()).toEqual(['download_url', 'expires_at', 'filename', 'format', 'height', 'quality', 'score', 'size', 'uuid', 'width']);
    expect(data).toMatchObject({ quality: null, score: null });
    // Rotated clockwise, output (x, y) shows cut (y, 9 - x); mirrored, (9 - x) becomes x.
    for (let y = 0; y < 20; y++) {
      for (let x = 0; x < 10; x++) {
        const i = (y * 10 + x) * 4;
        const [sx, sy] = [7 + y, 5 + x];
        expect([...pixels.data.subarray(i, i + 4)]).toEqual([sx, sy, sx ^ sy, 255]);
      }
    }
    expect(await usedToday(user.id)).toBe(1);
    expect(response.headers.get('X-RateLimit-Remaining')).toBe('14');
    const record = await env.DB.prepare('SELECT operation FROM results WHERE uuid = ?1').bind(data.uuid).first<{ operation: string }>();
    expect(record?.operation).toBe('transform');
  });

  it('resizes, blurs, sharpens and greys a photo into another format', async () => {
    const user = await createTestUser({ plan: 'pro' });
    const response = await upload('/api/v1/transform', user.key, await corpus('jpeg/orientation/landscape_6.jpg'), {
      steps: steps({ op: 'resize', width: 300 }, { op: 'blur', sigma: 1.5 }, { op: 'sharpen', sigma: 1 }, { op: 'grayscale' }),
      format: 'webp',
      quality: '70',
    });
    const { data, pixels } = await resultPixels(response);
    // The EXIF-rotated file is shown 600x450: 300 wide is 225 high.
    expect(data).toMatchObject({ format: 'webp', width: 300, height: 225 });
    let colourful = 0;
    for (let i = 0; i < pixels.data.length; i += 4) if (Math.max(Math.abs(pixels.data[i] - pixels.data[i + 1]), Math.abs(pixels.data[i + 1] - pixels.data[i + 2])) > 6) colourful++;
    expect(colourful).toBe(0);
  });

  it('keeps the input format unless one is given, and takes an empty list as a plain re-encode', async () => {
    const user = await createTestUser({ plan: 'pro' });
    const jpeg = await corpus('jpeg/camera/Canon_40D.jpg');
    expect((await json(await upload('/api/v1/transform', user.key, jpeg, { steps: '[]' }))).data).toMatchObject({ format: 'jpg', width: 100, height: 68 });
    expect((await json(await upload('/api/v1/transform', user.key, jpeg, { steps: steps({ op: 'rotate', angle: 270 }), format: 'avif' }))).data).toMatchObject({ format: 'avif', width: 68, height: 100 });
  });
});

describe('exact sizes', () => {
  it('resizes a 600x450 picture to height 90 as 120x90, in every input format and through both calls', async () => {
    const user = await createTestUser({ plan: 'pro' });
    const clock = new ManualClock();
    const client = clockedClient(clock);
    const jpeg = await corpus('jpeg/orientation/landscape_1.jpg');
    const inputs: [ImageFormat, Uint8Array][] = [['jpeg', jpeg], ...(await Promise.all((['png', 'webp', 'avif'] as const).map(async (format) => [format, await encodeImage(format, gradient(600, 450))] as [ImageFormat, Uint8Array])))];
    for (const [format, input] of inputs) {
      for (const [path, fields] of [['/api/v1/resize', { height: '90' }], ['/api/v1/transform', { steps: steps({ op: 'resize', height: 90 }) }]] as const) {
        clock.advance(200);
        const body = await json(await client.upload(path, user.key, input, fields));
        expect(body.data, `${format} ${path}`).toMatchObject({ width: 120, height: 90 });
      }
    }
  });

  it('keeps the exact ratio in every fit, to the nearest pixel', async () => {
    const user = await createTestUser({ plan: 'pro' });
    const clock = new ManualClock();
    const client = clockedClient(clock);
    const jpeg = await corpus('jpeg/orientation/portrait_1.jpg'); // 450x600
    // 450 * 77 / 600 = 57.75; 600 * 333 / 450 = 444; sharp gives 57x77 for inside (a pixel short).
    const expected: [string, Record<string, string>, [number, number]][] = [
      ['inside', { width: '333', height: '77' }, [58, 77]],
      ['outside', { width: '333', height: '77', fit: 'outside' }, [333, 444]],
      ['cover', { width: '333', height: '77', fit: 'cover' }, [333, 77]],
      ['contain', { width: '333', height: '77', fit: 'contain' }, [333, 77]],
      ['fill', { width: '333', height: '77', fit: 'fill' }, [333, 77]],
      ['width only', { width: '101' }, [101, 135]],
      ['height only', { height: '37' }, [28, 37]],
    ];
    for (const [name, fields, [width, height]] of expected) {
      clock.advance(200);
      const body = await json(await client.upload('/api/v1/resize', user.key, jpeg, { ...fields, format: 'png' }));
      expect(body.data, name).toMatchObject({ width, height });
    }
  });
});

describe('bad steps', () => {
  const CASES: [string, string, string][] = [
    ['invalid JSON', '[{"op":"rotate",', 'steps'],
    ['not an array', '{"op":"rotate","angle":90}', 'steps'],
    ['more than 10 steps', steps(...Array.from({ length: 11 }, () => ({ op: 'grayscale' }))), 'steps'],
    ['a step that is not an object', steps({ op: 'grayscale' }, 'rotate'), 'steps[1]'],
    ['an unknown op', steps({ op: 'grayscale' }, { op: 'swirl' }), 'steps[1].op'],
    ['no op', steps({ angle: 90 }), 'steps[0].op'],
    ['a missing field', steps({ op: 'rotate' }), 'steps[0].angle'],
    ['an angle off the right angles', steps({ op: 'rotate', angle: 45 }), 'steps[0].angle'],
    ['an unknown axis', steps({ op: 'flip', axis: 'diagonal' }), 'steps[0].axis'],
    ['a blur sigma below 0.3', steps({ op: 'crop', x: 0, y: 0, width: 4, height: 4 }, { op: 'resize', width: 2 }, { op: 'blur', sigma: 0.1 }), 'steps[2].sigma'],
    ['a blur sigma above 1000', steps({ op: 'blur', sigma: 1000.5 }), 'steps[0].sigma'],
    ['a sharpen sigma above 10', steps({ op: 'sharpen', sigma: 11 }), 'steps[0].sigma'],
    ['a sigma given as text', steps({ op: 'sharpen', sigma: '1' }), 'steps[0].sigma'],
    ['a field the op does not have', steps({ op: 'grayscale', amount: 1 }), 'steps[0].amount'],
    ['a resize without a side', steps({ op: 'resize' }), 'steps[0].width'],
    ['a resize side past 12000', steps({ op: 'resize', width: 12001 }), 'steps[0].width'],
    ['cover without both sides', steps({ op: 'resize', width: 4, fit: 'cover' }), 'steps[0].height'],
    ['a crop width of 0.5', steps({ op: 'crop', x: 0, y: 0, width: 0.5, height: 2 }), 'steps[0].width'],
    ['a negative crop offset', steps({ op: 'crop', x: -1, y: 0, width: 2, height: 2 }), 'steps[0].x'],
    // The 8x6 picture is 6x8 once turned: x 6 is outside it.
    ['a crop outside the picture as it stands at that step', steps({ op: 'rotate', angle: 90 }, { op: 'crop', x: 6, y: 0, width: 1, height: 1 }), 'steps[1].x'],
    ['a crop outside the picture after a resize', steps({ op: 'resize', width: 4 }, { op: 'crop', x: 0, y: 0, width: 4, height: 4 }), 'steps[1].height'],
    ['a resized side past 12000 after the steps before it', steps({ op: 'crop', x: 0, y: 0, width: 8, height: 1 }, { op: 'resize', height: 1600 }), 'steps[1].height'],
  ];

  it.each(CASES)('%s', async (_name, value, field) => {
    const user = await createTestUser();
    const response = await upload('/api/v1/transform', user.key, await encodeImage('png', gradient(8, 6)), { steps: value });
    const body = await expectFailure(response, 422, 'INVALID_PARAMETERS');
    expect(body.error.message).toContain(`"${field}"`);
    expect(await usedToday(user.id)).toBe(0);
  });

  it('names the picture size at that step when a crop leaves it', async () => {
    const user = await createTestUser();
    const body = await expectFailure(await upload('/api/v1/transform', user.key, await encodeImage('png', gradient(8, 6)), { steps: steps({ op: 'rotate', angle: 90 }, { op: 'crop', x: 0, y: 0, width: 7, height: 8 }) }), 422, 'INVALID_PARAMETERS');
    expect(body.error.message).toContain('6x8');
    expect(await usedToday(user.id)).toBe(0);
  });

  it('needs steps', async () => {
    const user = await createTestUser();
    const body = await expectFailure(await upload('/api/v1/transform', user.key, await encodeImage('png', gradient(8, 6)), {}), 422, 'INVALID_PARAMETERS');
    expect(body.error.message).toContain('"steps"');
  });
});

describe('POST /app/v1/transform (the converter page)', () => {
  it('chains steps for a signed-in user on the same quota', async () => {
    const owner = await createTestUser();
    const browser = new WebClient();
    expect((await browser.signUp(owner.email, 'a long enough passphrase', { api_key: owner.key })).status).toBe(303);
    const form = new FormData();
    form.append('file', new File([await encodeImage('png', gradient(40, 30))], 'picture.png'));
    form.append('steps', steps({ op: 'crop', x: 0, y: 0, width: 30, height: 20 }, { op: 'resize', width: 15 }, { op: 'rotate', angle: 180 }, { op: 'flip', axis: 'vertical' }));
    form.append('format', 'webp');
    const response = await browser.request('/app/v1/transform', { method: 'POST', body: form, headers: { Origin: browser.origin, 'X-CSRF-Token': (await browser.csrfToken('/convert'))! } });
    expect(response.status).toBe(200);
    expect((await json(response)).data).toMatchObject({ format: 'webp', width: 15, height: 10 });
    expect(await usedToday(owner.id)).toBe(1);
  });
});
