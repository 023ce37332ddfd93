import { createApp } from './app';
import { deleteEndedWindows } from './db/login-throttle';
import { deleteExpiredIdempotencyKeys } from './db/idempotency';
import { deleteExpiredKeyReveals } from './db/key-reveals';
import { deleteExpiredSessions } from './db/sessions';
import { deleteExpiredResults } from './storage/results';

export { RateLimiter } from './rate-limiter';

const app = createApp();

export default {
  fetch: app.fetch,
  async scheduled(controller, env, ctx) {
    const now = new Date(controller.scheduledTime);
    ctx.waitUntil(
      Promise.all([
        deleteExpiredResults(env, now),
        deleteExpiredSessions(env.DB, now),
        deleteEndedWindows(env.DB, now),
        deleteExpiredKeyReveals(env.DB, now),
        deleteExpiredIdempotencyKeys(env.DB, now),
      ]),
    );
  },
} satisfies ExportedHandler<Env>;
