import { env, SELF } from 'cloudflare:test';
import { it, expect } from 'vitest';
it('decodes a corpus jpeg', async () => {
  const f = await (env as any).CORPUS.fetch('http://corpus/photos/photo-1mp.jpg');
  const r = await SELF.fetch('http://x/', { method: 'POST', body: await f.arrayBuffer() });
  expect(await r.json()).toEqual({ w: expect.any(Number), h: expect.any(Number) });
});
