import { WasmLedger } from './codecs/wasm-memory';
import type { CpuTurns } from './operations';
import { ALONE, newRun, withRunContext } from './run-context';
import type { StageProfile } from './stage-profile';
import { forward, type RowSource } from './stages/rows';

/**
 * What one pipeline run holds at its fullest: its input, the JavaScript buffers its stages hold
 * (RowSource.heldBytes) and the WebAssembly memories of the codec instances it created. Sampled at
 * every band and at the steps between; a codec instance dropped since the last sample counts at
 * its peak size (wasm-memory.ts).
 */
export class MemoryMeter {
  peakBytes = 0;
  private readonly ledger = new WasmLedger();

  /** `heldThroughout`: bytes the run holds from start to end (its input, unless released). */
  constructor(private heldThroughout: number) {}

  /** The input is gone (ImageFile.release): it is no longer counted. */
  releaseInput(): void {
    this.heldThroughout = 0;
  }

  /**
   * Runs the pipeline so that the codec instances it creates are counted here; `share` is how it
   * takes turns with other requests (run-context.ts), `profile` where its time goes.
   */
  run<T>(job: () => Promise<T>, share: CpuTurns = ALONE, profile: StageProfile | null = null): Promise<T> {
    return withRunContext(newRun(this.ledger, share, profile), job);
  }

  sample(jsBytes: number): void {
    const bytes = this.heldThroughout + jsBytes + this.ledger.take();
    if (bytes > this.peakBytes) this.peakBytes = bytes;
  }

  /** `source` sampled at every band it hands out, with what `alsoHeld` (the result's sink) holds then. */
  metered(source: RowSource, alsoHeld: () => number = () => 0): RowSource {
    return {
      ...forward(source),
      read: async () => {
        const band = await source.read();
        this.sample(source.heldBytes() + alsoHeld());
        return band;
      },
    };
  }
}
