import { WORK_BETWEEN_TURNS_ALONE_NS, WORK_BETWEEN_TURNS_CONTENDED_NS } from '../image/run-context';

/**
 * Sharing the isolate's one thread. An isolate runs one piece of JavaScript at a time, so a long
 * pipeline run (seconds of codec work) would hold up every other request in it: their D1, Durable
 * Object and R2 steps complete, but their code only runs when the long run lets the event loop
 * turn. Long runs therefore stop at yield points (about every 10 ms of work alone, 3 ms beside others: src/image/run-context.ts)
 * and take a turn here:
 * - the event loop turns, so that what arrived meanwhile is delivered;
 * - while any other request is in flight that is not itself a long run (nor waiting for memory,
 *   which a pause would not help), the long run waits until they are done, at most MAX_PAUSE_MS at a
 *   time: short requests go first, as a scheduler favours the shortest job. But the long runs keep
 *   at least LONG_RUNS_SHARE of the time, measured over the last second or so: under a steady
 *   stream of short requests (a busy isolate always has some in flight, most of them waiting for
 *   their uploads or the stores) they stop pausing until they have had it, so they are never
 *   starved, and the work they wait for is bounded (src/admission: a request's expected wait).
 * Workers' clocks stand still while code runs, so the work between yield points is counted, not
 * timed; timers do fire while a run is paused.
 */
export class CpuShare {
  /** `maxPauseMs`: the longest a long run waits at one turn (tests lengthen it where the bound is not what they look at). */
  constructor(private readonly maxPauseMs = MAX_PAUSE_MS) {}

  private requests = 0;
  private longRuns = 0;
  /** Requests whose bodies are being read: each piece of a body waits for a turn of the event loop. */
  private readingBodies = 0;
  private waitingForMemory = 0;
  private readonly paused = new Set<() => void>();
  private leftAt = -Infinity;
  /** Recent work of the long runs and recent time they were paused, in ms, decaying over SHARE_WINDOW_MS. */
  private recentWorkMs = 0;
  private recentPausedMs = 0;
  private decayedAt = Date.now();
  private pausedSince: number | null = null;

  /** A request entered the isolate; call the result once it has answered. */
  enter(): () => void {
    this.requests++;
    return once(() => {
      this.requests--;
      this.leftAt = Date.now();
      this.wake();
    });
  }

  /** A request's body is being read (a multipart upload); call the result once it is. */
  readingBody(): () => void {
    this.readingBodies++;
    return once(() => {
      this.readingBodies--;
    });
  }

  /** A request waits for memory (src/admission MemoryAdmission); call the result once it runs or gives up. */
  waitForMemory(): () => void {
    this.waitingForMemory++;
    this.wake();
    return once(() => {
      this.waitingForMemory--;
    });
  }

  /**
   * A pipeline run: whether others are in the isolate beside it, and its turn at a yield point. A run
   * counts as long once its estimated work (`expect`) says so, or from its first turn without one,
   * until `end()`; a run expected to be short (a thumbnail) does not pause at its turns, and long ones
   * pause for it, unless it turns out to work longer.
   */
  run(): RunShare {
    let long = false;
    let ended = false;
    let workedMs = 0;
    let expectedMs: number | null = null;
    const startedAt = Date.now();
    const becomeLong = () => {
      if (long || ended) return;
      long = true;
      this.longRuns++;
      // A run paused for this request, while it was still a short one, need not wait any more.
      this.wake();
    };
    return {
      workedMs: () => workedMs,
      // Beside others, a long run that has had less than its share works longer between turns: each
      // turn waits for whatever the other requests do in the meantime, so short slices alone would
      // leave it a few ms in every hundred.
      sliceNs: () => {
        const contended = this.requests > 1 || (this.leftAt >= startedAt && Date.now() - this.leftAt < LINGER_MS);
        if (!contended) return WORK_BETWEEN_TURNS_ALONE_NS;
        // A body being read moves a piece at each turn: long slices would make a large upload take seconds.
        if (!long || this.readingBodies > 0 || this.longRunsHadTheirShare()) return WORK_BETWEEN_TURNS_CONTENDED_NS;
        return SLICE_BEHIND_MS * 1e6;
      },
      expect: (ms: number) => {
        expectedMs = ms;
        if (ms >= LONG_RUN_MS) becomeLong();
      },
      // A request that answered while this run went on still has its answer to send, which the
      // runtime writes between turns (one that answered before the run began has sent it).
      contended: () => this.requests > 1 || (this.leftAt >= startedAt && Date.now() - this.leftAt < LINGER_MS),
      turn: async (passes = 1, sliceMs = 0) => {
        workedMs += sliceMs;
        // After the run, its request is a short one storing its result (the last part of a large
        // file): it would only wait for itself.
        if (ended) return macrotask();
        // Known to be short: a turn of the event loop, and on; it will be done in a moment.
        if (!long && expectedMs !== null && expectedMs < LONG_RUN_MS && workedMs < LONG_RUN_MS) return macrotask();
        becomeLong();
        this.recentWorkMs += sliceMs;
        for (let pass = 0; pass < passes && this.shortRequests() === 0; pass++) await macrotask();
        if (this.shortRequests() > 0 && this.longRunsHadTheirShare()) await this.pause();
        else if (this.shortRequests() > 0) await macrotask();
      },
      end: once(() => {
        ended = true;
        if (!long) return;
        this.longRuns--;
        this.wake();
      }),
    };
  }

  private shortRequests(): number {
    return this.requests - this.longRuns - this.waitingForMemory;
  }

  /** Whether the long runs have had LONG_RUNS_SHARE of the recent time, and so may pause for short requests. */
  private longRunsHadTheirShare(): boolean {
    this.decay();
    const total = this.recentWorkMs + this.recentPausedMs;
    return total === 0 || this.recentWorkMs / total >= LONG_RUNS_SHARE;
  }

  /** Both recent figures fade by e over SHARE_WINDOW_MS (Workers' clocks move at turns, which is when this runs). */
  private decay(): void {
    const now = Date.now();
    if (this.pausedSince !== null) {
      this.recentPausedMs += now - this.pausedSince;
      this.pausedSince = now;
    }
    const fade = Math.exp(-(now - this.decayedAt) / SHARE_WINDOW_MS);
    this.recentWorkMs *= fade;
    this.recentPausedMs *= fade;
    this.decayedAt = now;
  }

  private pause(): Promise<void> {
    if (this.paused.size === 0) this.pausedSince = Date.now();
    return new Promise((resolve) => {
      const resume = () => {
        clearTimeout(timer);
        this.paused.delete(resume);
        if (this.paused.size === 0) {
          this.decay();
          this.pausedSince = null;
        }
        resolve();
      };
      // No longer than keeps the long runs at their share (nor than MAX_PAUSE_MS).
      const allowedMs = this.recentWorkMs / LONG_RUNS_SHARE - this.recentWorkMs - this.recentPausedMs;
      const timer = setTimeout(resume, Math.max(1, Math.min(this.maxPauseMs, allowedMs || this.maxPauseMs)));
      this.paused.add(resume);
    });
  }

  /**
   * Resumes paused runs once no short request is left, a few milliseconds later: the request that
   * just ended still has its answer to send, which the runtime writes on this isolate's thread
   * while no JavaScript runs (a resumed run would hold it until its next turn).
   */
  private wake(): void {
    if (this.shortRequests() > 0) return;
    for (const resume of [...this.paused]) setTimeout(resume, ANSWER_FLUSH_MS);
  }
}

export interface RunShare {
  /** Other requests are in the isolate. */
  contended(): boolean;
  /**
   * Awaited at a yield point, after `sliceMs` of (estimated) work: lets the event loop turn
   * (`passes` times, unless a request comes in), and short requests finish first.
   */
  turn(passes?: number, sliceMs?: number): Promise<void>;
  /** Estimated ms of work the run has reported at its turns. */
  workedMs(): number;
  /** The run's estimated work, once it is admitted (pipeline.ts estimatedWorkMs). */
  expect(ms: number): void;
  /** Work (ns) before the next turn: longer for a long run that has had less than its share. */
  sliceNs(): number;
  end(): void;
}

/**
 * Longest a long run waits for short requests at one yield point: a short conversion takes
 * 20-60 ms, so this is rarely reached; when short ones keep coming, the long run still moves on.
 */
const MAX_PAUSE_MS = 250;

/** Work between turns of a long run behind its share (run-context.ts has the others). */
const SLICE_BEHIND_MS = 25;

/** A run expected to work at least this long is a long one from the start (see run()). */
const LONG_RUN_MS = 100;

/** The part of the time the long runs keep beside short requests (see the class). */
const LONG_RUNS_SHARE = 0.5;

/** Over about how long that share is measured. */
const SHARE_WINDOW_MS = 1000;

/** How long a long run stays paused after the last short request answered (see wake). */
const ANSWER_FLUSH_MS = 5;

/** How long after a request answered the runs beside it still take turns as often as while it ran. */
const LINGER_MS = 100;

/** One turn of the event loop: timers and I/O that are ready run first. */
function macrotask(): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, 0));
}

function once(action: () => void): () => void {
  let done = false;
  return () => {
    if (done) return;
    done = true;
    action();
  };
}

/** The isolate's one share (module state lives as long as the isolate). */
export const cpuShare = new CpuShare();
