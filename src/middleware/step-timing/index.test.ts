import { OpenAPIHono } from '@hono/zod-openapi';
import { timing } from 'hono/timing';
import { describe, expect, it } from 'vitest';
import type { AppEnv } from '../../env';
import { timedStep } from './index';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function metrics(header: string | null): Record<string, number> {
  return Object.fromEntries((header ?? '').split(',').map((entry) => [entry.split(';')[0], Number(/dur=([\d.]+)/.exec(entry)?.[1])]));
}

describe('timedStep', () => {
  it('reports each step by its own time, not the steps after it', async () => {
    const app = new OpenAPIHono<AppEnv>();
    app.use(timing());
    app.get(
      '/',
      timedStep('outer', async (_c, next) => {
        await sleep(30);
        await next();
        await sleep(30);
      }),
      timedStep('inner', async (_c, next) => {
        await sleep(20);
        await next();
      }),
      async (c) => {
        await sleep(300);
        return c.text('done');
      },
    );
    const response = await app.request('/');
    expect(await response.text()).toBe('done');
    const { outer, inner, total } = metrics(response.headers.get('Server-Timing'));
    expect(outer).toBeGreaterThanOrEqual(55);
    expect(outer).toBeLessThan(250); // with the steps after it, 350 or more
    expect(inner).toBeGreaterThanOrEqual(18);
    expect(inner).toBeLessThan(250);
    expect(total).toBeGreaterThanOrEqual(370);
  });

  it('still reports a step that refused the request', async () => {
    const app = new OpenAPIHono<AppEnv>();
    app.use(timing());
    app.onError((_error, c) => c.text('refused', 403));
    app.get(
      '/',
      timedStep('check', async () => {
        await sleep(10);
        throw new Error('no');
      }),
      (c) => c.text('never'),
    );
    const response = await app.request('/');
    expect(response.status).toBe(403);
    expect(metrics(response.headers.get('Server-Timing')).check).toBeGreaterThanOrEqual(8);
  });
});
