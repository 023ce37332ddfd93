import { doWork } from '../run-context';
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
  /** Stops counting the memory and drops the instance; safe to call more than once. */
  release(): void;
  /**
   * Calls the entry point at `pointer` (its `<name>_entry()` export, codecs/common/yield.h) so that
   * it can let other runs in the isolate go on at the module's yield points while it works: through
   * JSPI, where the platform has it (workerd and Node 24 do); a plain call otherwise.
   */
  callYielding(pointer: number, ...args: number[]): Promise<number>;
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

/** The import every module with yield points has (codecs/common/yield.c); an optimised build renames the import, not the function. */
const YIELD_FUNCTION = 'js_yield';

/**
 * A fresh instance of an Emscripten module for a job that outlives one call (a streaming decoder or
 * encoder handing out bands across awaits). `overrides` become properties of the Emscripten Module
 * object, where the module's imported JavaScript functions (EM_JS) find their callbacks.
 */
export async function openEmscripten<T>(factory: EmscriptenFactory, module: WebAssembly.Module, overrides: object = {}, nsPerYieldUnit = 0): Promise<WasmInstance<T>> {
  const { instance, memory, exports } = await instantiateEmscripten<T>(factory, module, overrides, nsPerYieldUnit);
  const untrack = trackMemory(memory);
  let live = true;
  const setYielding = (instance as { _codec_set_yielding?: (on: number) => void })._codec_set_yielding;
  const table = Object.values(exports).find((value): value is WebAssembly.Table => value instanceof WebAssembly.Table);
  return {
    instance,
    memory,
    release() {
      if (!live) return;
      live = false;
      untrack();
    },
    async callYielding(pointer, ...args) {
      const fn = table?.get(pointer) as ((...args: number[]) => number) | null | undefined;
      if (!fn) throw new Error(`no function at ${pointer} in the module's table`);
      if (!jspi || !setYielding) return fn(...args);
      setYielding(1);
      try {
        return await jspi.promising(fn)(...args);
      } finally {
        setYielding(0);
      }
    },
  };
}

/** Workers cannot fetch .wasm URLs, so the compiled module (a static import) is instantiated through `instantiateWasm`. */
async function instantiateEmscripten<T>(
  factory: EmscriptenFactory,
  module: WebAssembly.Module,
  overrides: object,
  nsPerYieldUnit: number,
): Promise<{ instance: T; memory: WebAssembly.Memory; exports: WebAssembly.Exports }> {
  let memory: WebAssembly.Memory | undefined;
  let exports: WebAssembly.Exports = {};
  const instance = (await (factory as (options: object) => Promise<T>)({
    ...overrides,
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
          functions[key] = jspi ? (new jspi.Suspending((units: number) => doWork(units * nsPerYieldUnit)) as WebAssembly.ImportValue) : () => {};
        }
      }
      const wasm = new WebAssembly.Instance(module, imports);
      exports = wasm.exports;
      memory = Object.values(wasm.exports).find((value): value is WebAssembly.Memory => value instanceof WebAssembly.Memory);
      receive(wasm);
      return wasm.exports;
    },
  })) as T;
  if (!memory) throw new Error('codec instance has no exported memory');
  return { instance, memory, exports };
}
