import path from 'node:path';
import { defineConfig } from 'vitest/config';

/**
 * `npm run test:fairness`: a 32x32 conversion beside a 24 MP one through `npm run dev`, alone on
 * the machine. Not part of `npm test` yet: on this 2-core machine the small request answers in
 * 52-94 ms beside PNG and 53-81 ms beside WebP, but 96-187 ms beside AVIF, not reliably under its
 * 150 ms target (docs/performance.md, "Fairness"), and a test that fails at random would block
 * every change.
 */
export default defineConfig({
  test: {
    name: 'fairness',
    root: path.resolve(import.meta.dirname, '..'),
    environment: 'node',
    include: ['test/fairness/**/*.test.ts'],
    testTimeout: 180_000,
    hookTimeout: 240_000,
  },
});
