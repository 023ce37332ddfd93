import { createApp } from './app';
import { parseSimulatedRtt, recordingRoundTrips, withSimulatedLatency } from './bindings/simulated-latency';
import { deleteEndedWindows } from './db/login-throttle';
import { deleteExpiredKeyReveals } from './db/key-reveals';
import { deleteExpiredSessions } from './db/sessions';
import { deleteExpiredResults } from './storage/results';

export { UserGate } from './user-gate';

const app = createApp();

export default {
  fetch(request, env, ctx) {
    const rtt = parseSimulatedRtt(env.SIMULATED_RTT_MS);
    if (!rtt) return app.fetch(request, env, ctx);
    return recordingRoundTrips(() => app.fetch(request, withSimulatedLatency(env, rtt), ctx));
  },
  async scheduled(controller, env, ctx) {
    const now = new Date(controller.scheduledTime);
    ctx.waitUntil(
      Promise.all([
        deleteExpiredResults(env, now),
        deleteExpiredSessions(env.DB, now),
        deleteEndedWindows(env.DB, now),
        deleteExpiredKeyReveals(env.DB, now),
      ]),
    );
  },
} satisfies ExportedHandler<Env>;
