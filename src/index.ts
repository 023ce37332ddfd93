import { createApp } from './app';
import { deleteExpiredResults } from './storage/results';

export { RateLimiter } from './rate-limiter';

const app = createApp();

export default {
  fetch: app.fetch,
  async scheduled(controller, env, ctx) {
    ctx.waitUntil(deleteExpiredResults(env, new Date(controller.scheduledTime)));
  },
} satisfies ExportedHandler<Env>;
