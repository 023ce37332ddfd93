import { AppError } from '../errors';
import { codecMemoryPool } from '../image/codecs/memory-pool';
import { expectedStartMs, type Holder } from './expected-wait';

/** What a run is expected to cost in work and how much of it is done, to tell requests behind it how long they would wait. */
export interface RunWork {
  /** Estimated ms of work of the whole run (its plan's figures). */
  estimatedMs: number;
  /** Ms of that estimate done so far. */
  doneMs(): number;
}

/**
 * Admission by memory. A deployed isolate has 128 MB for all its requests, and going over ends
 * all of them. Two things are counted against one budget:
 * - uploads, from their Content-Length before a byte of the body is read (`reserve`): a body being
 *   parsed, and the copy the pipeline takes of its file;
 * - pipeline runs, at the peak the memory guard predicts from the header (src/image/memory-plan.ts)
 *   (`admit`), which takes over its own upload's reservation (the input is part of that peak).
 * What is counted together never exceeds the budget, except one request alone (nothing else
 * counted), which is always let in: waiting would wait for nothing. What does not fit waits in
 * arrival order, runs before uploads not yet read (a run's end frees memory, an upload's start
 * takes it), for at most `maxWaitMs`, then 503 SERVER_BUSY; a request whose client hangs up leaves
 * the queue at once. A request expected to wait longer than that, judged from the work left in what
 * runs and waits before it (expected-wait.ts), is refused at once with 503 and a Retry-After of
 * that wait, before its body is read where it is an upload: the client learns in milliseconds,
 * not after the wait. Small work goes first: a request that fits now goes past large ones that
 * wait when what went past (it included) leaves room for the first in line, so the one it goes
 * past starts no later (a 32x32 conversion once waited 4 s behind a 24 MP one that waited); and
 * a run expected to be short (under SHORT_RUN_MS) goes past whenever it fits now, since it delays
 * the first in line by no more than its own few milliseconds.
 * Memory held for nobody (`spare`: codec memories kept warm for the next instance) is let go as
 * soon as it no longer fits beside what is counted; what a warm memory lent to a run holds beyond
 * the run's own count is counted beside the runs until it comes back.
 */
export class MemoryAdmission {
  /** What holds memory now, with the work it has left before it lets it go. */
  private readonly holders = new Set<{ bytes: () => number; workMs: () => number }>();
  private held = 0;
  /** Of `held`, what went past requests waiting in line (see the class). */
  private overtaking = 0;
  private peak = 0;
  private ledgerPeak = 0;
  private running = 0;
  /** See wallPerWork. */
  private scale = WALL_PER_WORK_MS;
  private learntAt = Date.now();
  private readonly runs: Waiting[] = [];
  private readonly uploads: Waiting[] = [];

  private readonly maxWaitMs: number;
  private readonly spare?: Spare;

  constructor(
    private readonly budgetBytes: () => number,
    options: { maxWaitMs?: number; spare?: Spare } = {},
  ) {
    this.maxWaitMs = options.maxWaitMs ?? MAX_WAIT_MS;
    this.spare = options.spare;
    this.spare?.onReturn(() => {
      this.keepSpareWithinBudget();
      this.startWaiting();
    });
  }

  /** Bytes counted now: reserved uploads and admitted runs. */
  get heldBytes(): number {
    return this.held;
  }

  /** The most that was counted at once (an isolate's high-water mark, for logs and tests). */
  get peakHeldBytes(): number {
    return this.peak;
  }

  /**
   * Every byte the isolate's requests hold, as one ledger: uploads arriving, runs, result parts
   * being stored, and the codec memories kept warm or lent beyond what their runs count.
   */
  get ledgerBytes(): number {
    return this.held + (this.spare?.lentExcessBytes ?? 0) + (this.spare?.idleBytes ?? 0);
  }

  /** The ledger's high-water mark. */
  get peakLedgerBytes(): number {
    return this.ledgerPeak;
  }

  /** Runs admitted and not yet finished. */
  get activeRuns(): number {
    return this.running;
  }

  /** Counts `bytes` already in memory (a result's last part while it is stored) until released. */
  hold(bytes: number): () => void {
    const hold = this.take(bytes, false, () => 0);
    return () => hold.release();
  }

  /**
   * Waits until an upload of `bytes` fits (see the class), and counts it until the returned hold
   * is released, shrunk or taken over by its run.
   */
  async reserve(bytes: number, options: WaitOptions & { runBytes?: number } = {}): Promise<Hold> {
    const first = this.runs[0] ?? this.uploads[0];
    const workMs = () => uploadWorkMs(bytes);
    const limitMs = this.waitLimitMs(options.deadline);
    // A large body takes a while to read on a busy isolate: its run (guessed from its size) is
    // judged now, so that its 503 leaves before the body is read rather than after.
    const runBytes = options.runBytes ?? 0;
    if (runBytes > bytes) this.refuseIfLong(runBytes, 0, this.runs, limitMs);
    if (this.goesFirst(bytes, 0, first, workMs())) return this.take(bytes, first !== undefined, workMs);
    const workTimeMs = this.refuseIfLong(bytes, 0, [...this.runs, ...this.uploads], limitMs);
    return this.wait(this.uploads, bytes, 0, workMs(), workTimeMs, limitMs, () => this.take(bytes, false, workMs), options.signal);
  }

  /**
   * Waits until a run needing `bytes` fits beside what else is counted, `upload` (its own upload's
   * reservation, now part of `bytes`) aside; returns the release.
   */
  async admit(bytes: number, options: WaitOptions & { upload?: Hold; work?: RunWork } = {}): Promise<RunCount> {
    const { signal, upload, work } = options;
    const own = upload?.bytes ?? 0;
    const workMs = work ? () => Math.max(0, work.estimatedMs - work.doneMs()) : () => uploadWorkMs(bytes);
    const enter = (overtakes = false) => {
      upload?.takenOver();
      const run = this.take(bytes, overtakes, workMs);
      this.running++;
      let done = false;
      const release = () => {
        if (done) return;
        done = true;
        this.running--;
        run.release();
      };
      return Object.assign(release, {
        // The run is over, but `smaller` bytes of it are still held (its result's last part, being stored).
        shrinkTo: (smaller: number) => {
          if (done) return;
          done = true;
          this.running--;
          run.shrinkTo(smaller);
          return () => run.release();
        },
      });
    };
    if (this.goesFirst(bytes, own, this.runs[0], workMs())) return enter(this.runs.length > 0);
    const limitMs = this.waitLimitMs(options.deadline);
    const workTimeMs = this.refuseIfLong(bytes, own, this.runs, limitMs);
    return this.wait(this.runs, bytes, own, workMs(), workTimeMs, limitMs, enter, signal);
  }

  /** How long a request may still wait: maxWaitMs, or less where its deadline is sooner. */
  private waitLimitMs(deadline?: number): number {
    return deadline === undefined || !Number.isFinite(deadline) ? this.maxWaitMs : Math.min(this.maxWaitMs, deadline - Date.now());
  }

  /**
   * The wall-clock ms a request of `bytes` would wait, behind `ahead`: the simulated work-time
   * (expected-wait.ts) times what waits have really taken per ms of it lately (`wallPerWork`): runs
   * get only part of the thread beside short requests and beside runs that come later, and
   * estimates err.
   */
  expectedWaitMs(bytes: number, own = 0, ahead: Waiting[] = [...this.runs, ...this.uploads]): number {
    return this.workTimeBefore(bytes, own, ahead) * this.wallPerWork();
  }

  /** Ms of work-time before a request of `bytes` fits (expected-wait.ts); its own upload is counted already and becomes part of its run. */
  private workTimeBefore(bytes: number, own: number, ahead: Waiting[]): number {
    const running: Holder[] = [...this.holders].map((holder) => ({ bytes: holder.bytes(), workMs: holder.workMs() }));
    const lent = this.spare?.lentExcessBytes ?? 0;
    if (lent > 0) running.push({ bytes: lent, workMs: 0 });
    return expectedStartMs(Math.max(0, bytes - own), this.budgetBytes(), running, ahead);
  }

  /**
   * Refuses a request expected to wait longer than `limitMs` (one that would not wait at all is let
   * through, whatever its deadline); returns its work-time before it starts.
   */
  private refuseIfLong(bytes: number, own: number, ahead: Waiting[], limitMs: number): number {
    const workTimeMs = this.workTimeBefore(bytes, own, ahead);
    const waitMs = workTimeMs * this.wallPerWork();
    if (waitMs > Math.max(0, limitMs)) throw serverBusy(waitMs);
    return workTimeMs;
  }

  /**
   * Wall ms per ms of expected work-time, learnt from the requests that waited: each wait moves it a
   * fifth of the way to what that one took, and it falls back towards WALL_PER_WORK_MS over about
   * half a minute without waits (a burst's congestion passes).
   */
  private wallPerWork(): number {
    const now = Date.now();
    const fade = Math.exp(-(now - this.learntAt) / SCALE_MEMORY_MS);
    this.scale = WALL_PER_WORK_MS + (this.scale - WALL_PER_WORK_MS) * fade;
    this.learntAt = now;
    return this.scale;
  }

  private learn(workTimeMs: number, waitedMs: number): void {
    // Waits of a few ms say more about timers than about the work before them.
    if (workTimeMs < 50) return;
    const observed = Math.min(MAX_WALL_PER_WORK, Math.max(1, waitedMs / workTimeMs));
    this.scale = this.wallPerWork() * 0.8 + observed * 0.2;
  }

  /**
   * Whether a request starts now: it fits, and either nobody is in line before it (`first`), or
   * what went past the first in line, it included, still leaves that one room once the rest is
   * released, or it is short work (see the class).
   */
  private goesFirst(bytes: number, own: number, first: Waiting | undefined, workMs: number): boolean {
    if (!this.fits(bytes, own)) return false;
    return !first || workMs < SHORT_RUN_MS || this.overtaking + bytes + first.bytes <= this.budgetBytes();
  }

  private fits(bytes: number, own: number): boolean {
    const others = this.held - own;
    return others === 0 || others + (this.spare?.lentExcessBytes ?? 0) + bytes <= this.budgetBytes();
  }

  private take(bytes: number, overtakes: boolean, workMs: () => number): Hold {
    const holder = { bytes: () => hold.bytes, workMs };
    this.holders.add(holder);
    this.held += bytes;
    if (overtakes) this.overtaking += bytes;
    this.peak = Math.max(this.peak, this.held);
    this.keepSpareWithinBudget();
    const drop = (less: number) => {
      this.held -= less;
      if (overtakes) this.overtaking -= less;
      hold.bytes -= less;
      if (hold.bytes <= 0) this.holders.delete(holder);
    };
    const hold: Hold = {
      bytes,
      release: () => {
        drop(hold.bytes);
        this.startWaiting();
      },
      shrinkTo: (smaller) => {
        if (smaller >= hold.bytes) return;
        drop(hold.bytes - smaller);
        this.startWaiting();
      },
      takenOver: () => drop(hold.bytes),
    };
    return hold;
  }

  /** Warm memories held for nobody go as soon as the ledger would pass the budget with them. */
  private keepSpareWithinBudget(): void {
    if (this.spare && this.ledgerBytes > this.budgetBytes()) this.spare.drain();
    this.ledgerPeak = Math.max(this.ledgerPeak, this.ledgerBytes);
  }

  /** Queues a request; `enter` counts it, at the moment it is let in (so the next in line sees it counted). */
  private wait<T>(queue: Waiting[], bytes: number, own: number, workMs: number, workTimeMs: number, limitMs: number, enter: () => T, signal?: AbortSignal): Promise<T> {
    const queuedAt = Date.now();
    return new Promise<T>((resolve, reject) => {
      const leave = (error: unknown) => {
        const index = queue.indexOf(entry);
        if (index < 0) return;
        queue.splice(index, 1);
        clearTimeout(timer);
        reject(error);
        this.startWaiting();
      };
      const entry: Waiting = {
        bytes,
        own,
        workMs,
        start: () => {
          clearTimeout(timer);
          signal?.removeEventListener('abort', onAbort);
          this.learn(workTimeMs, Date.now() - queuedAt);
          resolve(enter());
        },
      };
      const onAbort = () => leave(signal!.reason);
      const timer = setTimeout(() => {
        this.learn(workTimeMs, limitMs);
        leave(serverBusy(this.workTimeBefore(bytes, own, queue.slice(0, queue.indexOf(entry))) * this.wallPerWork()));
      }, limitMs);
      queue.push(entry);
      signal?.addEventListener('abort', onAbort, { once: true });
    });
  }

  private startWaiting(): void {
    for (const queue of [this.runs, this.uploads]) {
      while (queue.length > 0 && this.fits(queue[0].bytes, queue[0].own)) queue.shift()!.start();
      // Uploads not yet read wait while a run does: they would only add to what it waits for.
      if (queue.length > 0) return;
    }
  }
}

/**
 * Memory the isolate keeps for nobody in particular, which it can let go at once (`idleBytes`),
 * and memory it lent out beyond what the borrowers count (`lentExcessBytes`), which comes back
 * when they are done (`onReturn`).
 */
export interface Spare {
  readonly idleBytes: number;
  readonly lentExcessBytes: number;
  drain(): void;
  onReturn(listener: () => void): void;
}

export interface WaitOptions {
  /** The request gives up waiting when its client hangs up. */
  signal?: AbortSignal;
  /** Date.now() by which it must have started: sooner than maxWaitMs from now where the request has waited already. */
  deadline?: number;
}

/** A run's count: released when it ends, or shrunk to what it still holds (its result's last part being stored). */
export type RunCount = (() => void) & { shrinkTo(bytes: number): (() => void) | undefined };

/** Counted bytes that belong to one request. */
export interface Hold {
  bytes: number;
  /** Stops counting them. Safe to call more than once. */
  release(): void;
  /** Counts fewer (the parsed form dropped, only the pipeline's copy left). */
  shrinkTo(bytes: number): void;
  /** Its run counts them from now on (MemoryAdmission.admit). */
  takenOver(): void;
}

interface Waiting {
  bytes: number;
  own: number;
  /** Estimated ms of work it will do once it starts. */
  workMs: number;
  start: () => void;
}

/**
 * The longest a request waits for memory, from when the isolate first saw it: one expected to wait
 * longer is told so at once, and one still waiting then is told so then. Its 503 is to reach the
 * client within 2 s of being sent, and under load a request reaches the isolate, and its answer
 * the client, a few hundred ms late.
 */
export const MAX_WAIT_MS = 1_400;

/** A run expected to work less than this goes past waiting ones whenever it fits (see the class). */
const SHORT_RUN_MS = 100;

/**
 * Wall-clock ms per ms of expected work-time with nothing learnt: short requests go first at the
 * runs' turns (src/admission/cpu-share.ts guarantees the runs half), and the estimates err.
 */
const WALL_PER_WORK_MS = 1.5;
const MAX_WALL_PER_WORK = 20;
const SCALE_MEMORY_MS = 30_000;

/**
 * A body not yet planned: its run's work guessed from its size, until the run's own estimate takes
 * over. A 12 MP JPEG photo (5 MB) takes about a second of work, a 1 MP one (0.4 MB) about 60 ms,
 * a 15 MP PNG (45 MB) about 1.5 s: 30-200 ms a MB of body, and the reservation counts two copies.
 */
const UPLOAD_WORK_MS_PER_RESERVED_MB = 50;

function uploadWorkMs(reservedBytes: number): number {
  return (reservedBytes / 2 ** 20) * UPLOAD_WORK_MS_PER_RESERVED_MB;
}

/** 503 SERVER_BUSY, with how long the request would (still) have waited as Retry-After. */
function serverBusy(expectedMs: number): AppError {
  const retryAfter = Math.max(1, Math.ceil(expectedMs / 1000));
  return new AppError(
    'SERVER_BUSY',
    `The server is busy with other large images: this one could not start for about ${retryAfter} second${retryAfter === 1 ? '' : 's'}. Retry after ${retryAfter} second${retryAfter === 1 ? '' : 's'}.`,
    undefined,
    { 'Retry-After': String(retryAfter) },
  );
}

let isolateAdmission: MemoryAdmission | null = null;

/** The isolate's one admission (requests in an isolate share its memory). */
export function admissionFor(budgetBytes: () => number): MemoryAdmission {
  isolateAdmission ??= new MemoryAdmission(budgetBytes, { spare: codecMemoryPool });
  return isolateAdmission;
}
