import { doWork } from '../run-context';
import { codecMemoryPool } from './memory-pool';
import { trackMemory } from './wasm-memory';

/**
 * jSquash's factory typings need DOM and Emscripten globals this project doesn't load, so each
 * codec file states the few methods it calls (`openEmscripten<ItsInterface>`).
 */
type EmscriptenFactory = unknown;

type Pixels = Uint8Array | Uint8ClampedArray;

/** The encode method every jSquash Emscripten encoder has; `null` means it failed. */
export interface EmscriptenEncoder<Options> {
  encode(pixels: Pixels, width: number, height: number, options: Options): Uint8Array | null;
}

/** A live codec instance whose WebAssembly memory is counted until `release()`. */
export interface WasmInstance<T> {
  instance: T;
  memory: WebAssembly.Memory;
  /** What the instance holds: its memory, or as much of a pooled memory as a new one would have grown to. */
  usedBytes(): number;
  /**
   * Stops counting the memory and drops the instance; safe to call more than once. The memory goes
   * back to the pool for the next instance in its role unless `handOn` is false (a memory grown for
   * work that was given up, which the next instance would hold as uncounted excess).
   */
  release(handOn?: boolean): void;
  /**
   * Calls the entry point at `pointer` (its `<name>_entry()` export, codecs/common/yield.h) so that
   * it can let other runs in the isolate go on at the module's yield points while it works: through
   * JSPI, where the platform has it (workerd and Node 24 do); a plain call otherwise.
   */
  callYielding(pointer: number, ...args: number[]): Promise<number>;
  /**
   * Run at each yield point of a `callYielding` call after the run's own turn; a promise it gives
   * suspends the call until it settles (an encoder's result sink drained while the file comes out).
   */
  atYield: (() => Promise<void> | undefined) | null;
}

/**
 * JSPI (WebAssembly.Suspending / promising): a long codec call (a whole WebP encode, an AV1
 * frame, the scans of a progressive JPEG) can wait inside WebAssembly for other requests, where
 * otherwise a 32x32 conversion would wait for all of it. Workers and Node report no time passing
 * inside a synchronous call, so the yield points count work (pixels), not milliseconds.
 */
interface Jspi {
  Suspending: new (fn: (...args: number[]) => unknown) => unknown;
  promising: (fn: (...args: number[]) => unknown) => (...args: number[]) => Promise<number>;
}
const jspi = (WebAssembly as unknown as Partial<Jspi>).Suspending ? (WebAssembly as unknown as Jspi) : null;

/** Whether a `callYielding` call can wait at its yield points (JSPI); without it nothing runs there, `atYield` included. */
export const CALLS_SUSPEND = jspi !== null;

/** The import every module with yield points has (codecs/common/yield.c); an optimised build renames the import, not the function. */
const YIELD_FUNCTION = 'js_yield';

/** How a codec's instances are opened. */
export interface OpenOptions {
  /** Properties of the Emscripten Module object, where the module's imported JavaScript functions (EM_JS) find their callbacks. */
  callbacks?: object;
  /** The nanoseconds of work one unit reported at a yield point stands for. */
  nsPerYieldUnit?: number;
  /**
   * What the instance is for ('jpeg-encoder'): a module with imported memory is given the memory
   * the last instance in this role left in the pool (memory-pool.ts), and gives it back.
   */
  role?: string;
}

const WASM_PAGE_BYTES = 65_536;

/** A new memory's size for each module, before it grows: the least a pooled memory counts as. */
const initialBytes = new WeakMap<WebAssembly.Module, number>();

/** A fresh instance of an Emscripten module for a job that outlives one call (a streaming decoder or encoder handing out bands across awaits). */
export async function openEmscripten<T>(factory: EmscriptenFactory, module: WebAssembly.Module, options: OpenOptions = {}): Promise<WasmInstance<T>> {
  const pooled = options.role ? codecMemoryPool.take(options.role) : undefined;
  const atYield: YieldHook = { current: null };
  const { instance, memory, exports, imported } = await instantiateEmscripten<T>(factory, module, options, pooled, atYield);
  if (!pooled && imported) initialBytes.set(module, memory.buffer.byteLength);
  // sbrk(0) is the top of everything the instance has written (its static data and stack lie below
  // the heap; emscripten's dlmalloc never gives memory back), so a new memory would have grown to it.
  const sbrk = (instance as { _sbrk?: (increment: number) => number })._sbrk;
  const writtenBytes = () => Math.ceil((sbrk?.(0) ?? memory.buffer.byteLength) / WASM_PAGE_BYTES) * WASM_PAGE_BYTES;
  const usedBytes = pooled
    ? () => Math.min(memory.buffer.byteLength, Math.max(initialBytes.get(module) ?? 0, writtenBytes()))
    : () => memory.buffer.byteLength;
  const untrack = trackMemory(memory, usedBytes);
  const endLending = pooled ? codecMemoryPool.lend(memory, usedBytes) : () => {};
  let live = true;
  let callsUnderway = 0;
  const setYielding = (instance as { _codec_set_yielding?: (on: number) => void })._codec_set_yielding;
  const table = Object.values(exports).find((value): value is WebAssembly.Table => value instanceof WebAssembly.Table);
  return {
    instance,
    memory,
    usedBytes,
    get atYield() {
      return atYield.current;
    },
    set atYield(hook) {
      atYield.current = hook;
    },
    release(handOn = true) {
      if (!live) return;
      live = false;
      untrack();
      // A call suspended at a yield point could still write to the memory: it is not handed on.
      if (handOn && options.role && imported && sbrk && callsUnderway === 0) {
        const written = sbrk(0);
        codecMemoryPool.give(options.role, memory, written > 0 && written <= memory.buffer.byteLength ? written : memory.buffer.byteLength);
      }
      endLending();
    },
    async callYielding(pointer, ...args) {
      const fn = table?.get(pointer) as ((...args: number[]) => number) | null | undefined;
      if (!fn) throw new Error(`no function at ${pointer} in the module's table`);
      if (!jspi || !setYielding) return fn(...args);
      setYielding(1);
      callsUnderway++;
      try {
        return await jspi.promising(fn)(...args);
      } finally {
        callsUnderway--;
        setYielding(0);
      }
    },
  };
}

/** The caller's `atYield`, which the instance's yield points read when they are reached. */
interface YieldHook {
  current: (() => Promise<void> | undefined) | null;
}

/** Workers cannot fetch .wasm URLs, so the compiled module (a static import) is instantiated through `instantiateWasm`. */
async function instantiateEmscripten<T>(
  factory: EmscriptenFactory,
  module: WebAssembly.Module,
  { callbacks = {}, nsPerYieldUnit = 0 }: OpenOptions,
  pooledMemory: WebAssembly.Memory | undefined,
  atYield: YieldHook,
): Promise<{ instance: T; memory: WebAssembly.Memory; exports: WebAssembly.Exports; imported: boolean }> {
  let memory: WebAssembly.Memory | undefined;
  let imported = false;
  let exports: WebAssembly.Exports = {};
  const instance = (await (factory as (options: object) => Promise<T>)({
    ...callbacks,
    ...(pooledMemory ? { wasmMemory: pooledMemory } : {}),
    noInitialRun: true,
    // Without it the glue resolves its .wasm against import.meta.url, which a bundled Worker lacks
    // ("Invalid URL string" under wrangler dev and on deployment); the module is passed in anyway.
    locateFile: (file: string) => file,
    instantiateWasm(imports: WebAssembly.Imports, receive: (instance: WebAssembly.Instance) => void) {
      // A module's yield points wait for what doWork answers (run-context.ts): a promise suspends it.
      // They report work in the module's own units (pixels of some step), `nsPerYieldUnit` each.
      // (An optimised build renames the import module too: "a", not "env".)
      for (const functions of Object.values(imports)) {
        for (const [key, value] of Object.entries(functions)) {
          if (typeof value !== 'function' || value.name !== YIELD_FUNCTION) continue;
          const yieldPoint = (units: number) => {
            const turn = doWork(units * nsPerYieldUnit);
            return turn ? turn.then(() => atYield.current?.()) : atYield.current?.();
          };
          functions[key] = jspi ? (new jspi.Suspending(yieldPoint) as WebAssembly.ImportValue) : () => {};
        }
      }
      const isMemory = (value: unknown): value is WebAssembly.Memory => value instanceof WebAssembly.Memory;
      const wasm = new WebAssembly.Instance(module, imports);
      exports = wasm.exports;
      const importedMemory = Object.values(imports).flatMap((values) => Object.values(values)).find(isMemory);
      imported = importedMemory !== undefined;
      memory = importedMemory ?? Object.values(wasm.exports).find(isMemory);
      receive(wasm);
      return wasm.exports;
    },
  })) as T;
  if (!memory) throw new Error('codec instance has no memory');
  return { instance, memory, exports, imported };
}
