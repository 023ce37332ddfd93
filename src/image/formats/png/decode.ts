import { damaged } from '../../bytes';
import type { Region } from '../../operations';
import type { Band, DecodeOptions, RowSource } from '../../stages/rows';
import { pngChunks, type PngHeader } from './header';
import { openPngZlib, statusError } from './png-zlib';
import { PALETTE } from './structure';

/*
 * PNG decoding in bands on our zlib build (codecs/png/decoder.c): the image data is pulled in
 * 64 KiB pieces as rows are needed, inflated straight into batches of rows (128 KiB), unfiltered
 * and expanded to RGBA into a band inside the WebAssembly memory, in one pass. A plain image holds
 * one inflate state, a batch, a row and the band; an Adam7 image one state, a batch and a row per
 * pass (decoder.c says why).
 */

export const PNG_BAND_ROWS = 16;

/** Opens a band decode of the image (or `options.region` of it), in bands of `bandRows` (tests show it changes nothing but the bands). */
export async function openPng(input: Uint8Array, png: PngHeader, options: DecodeOptions, bandRows = PNG_BAND_ROWS): Promise<RowSource & { wasmBytes(): number }> {
  if (options.shrink !== 1) throw new Error(`png: shrink ${options.shrink} is not supported`);
  if (png.colourType === PALETTE) {
    if (png.palette === null) throw damaged('png: palette image without PLTE');
    if (png.palette.length === 0 || png.palette.length % 3 !== 0 || png.palette.length > 768) throw damaged(`png: PLTE of ${png.palette.length} bytes`);
  }
  if (idatPayloads(input, png.imageData).next().done) throw damaged('png: no image data');
  const region = options.region ?? { x: 0, y: 0, width: png.width, height: png.height };
  checkRegion(region, png);

  // Each stream (one per Adam7 pass) reads the image data from its start.
  const readers = new Map<number, (view: Uint8Array) => number>();
  const wasm = await openPngZlib('png-decoder', {
    pngReadInput(stream, view) {
      let reader = readers.get(stream);
      if (!reader) readers.set(stream, (reader = imageDataReader(idatPayloads(input, png.imageData))));
      return reader(view);
    },
  });
  const lib = wasm.instance;
  const { x, y, width, height } = region;
  let decoder = lib._decoder_create(png.width, png.height, png.bitDepth, png.colourType, png.interlaced ? 1 : 0, x, y, width, height, bandRows);
  let rowsRead = 0;
  const close = () => {
    if (decoder) lib._decoder_destroy(decoder);
    decoder = 0;
    readers.clear();
    wasm.release();
  };
  if (!decoder) {
    close();
    throw statusError(lib, -2, 0);
  }
  if (png.colourType === PALETTE) {
    new Uint32Array(lib.HEAPU8.buffer, lib._decoder_palette(decoder), 256).set(paletteWords(png.palette!, png.transparency && 'paletteAlphas' in png.transparency ? png.transparency.paletteAlphas : null));
  }
  if (png.transparency && 'key' in png.transparency) {
    const [k0, k1 = -1, k2 = -1] = png.transparency.key;
    lib._decoder_set_key(decoder, k0, k1, k2);
  }
  return {
    width,
    height,
    model: 'rgba',
    alpha: png.colourType === 4 || png.colourType === 6 || png.transparency !== null,
    grey: png.colourType === 0 || png.colourType === 4,
    async read(): Promise<Band | null> {
      if (!decoder || rowsRead >= height) {
        close();
        return null;
      }
      const rows = lib._decoder_read(decoder);
      if (rows <= 0) {
        const error = rows < 0 ? statusError(lib, rows, lib._decoder_message(decoder)) : new Error('png: decoder_read gave no rows before the end of the region');
        close();
        throw error;
      }
      const pointer = lib._decoder_band(decoder);
      const band = { y: rowsRead, rows, data: lib.HEAPU8.subarray(pointer, pointer + rows * width * 4) };
      rowsRead += rows;
      return band;
    },
    heldBytes: () => 0,
    close,
    wasmBytes: () => wasm.usedBytes(),
  };
}

/** The data of the run of consecutive IDAT chunks from `first` (APNG's fdAT are frames after it), empty ones skipped. */
function* idatPayloads(bytes: Uint8Array, first: number): Generator<Uint8Array> {
  if (first < 0) return;
  for (const chunk of pngChunks(bytes, first)) {
    if (chunk.type !== 'IDAT') return;
    if (chunk.length > 0) yield bytes.subarray(chunk.data, chunk.data + chunk.length);
  }
}

/** Copies the next bytes of `parts` into each view it is given; returns how many (0 at the end). */
function imageDataReader(parts: Iterator<Uint8Array>): (view: Uint8Array) => number {
  let part: Uint8Array = new Uint8Array(0);
  let at = 0;
  return (view) => {
    let filled = 0;
    while (filled < view.length) {
      if (at === part.length) {
        const next = parts.next();
        if (next.done) break;
        [part, at] = [next.value, 0];
        continue;
      }
      const n = Math.min(view.length - filled, part.length - at);
      view.set(part.subarray(at, at + n), filled);
      at += n;
      filled += n;
    }
    return filled;
  };
}

/** RGBA words (R in the low byte) of the 256 palette indexes: PLTE with the tRNS alphas; an index past the palette is opaque black, as libpng's zero-filled palette gives. */
function paletteWords(palette: Uint8Array, alphas: Uint8Array | null): Uint32Array {
  const words = new Uint32Array(256).fill(0xff000000);
  for (let i = 0; i < palette.length / 3; i++) {
    const alpha = alphas && i < alphas.length ? alphas[i] : 255;
    words[i] = (palette[3 * i] | (palette[3 * i + 1] << 8) | (palette[3 * i + 2] << 16) | (alpha << 24)) >>> 0;
  }
  return words;
}

function checkRegion(region: Region, png: PngHeader): void {
  const { x, y, width, height } = region;
  const inside = [x, y, width, height].every(Number.isInteger) && x >= 0 && y >= 0 && width > 0 && height > 0;
  if (!inside || x + width > png.width || y + height > png.height) {
    throw new Error(`png: region ${width}x${height} at ${x},${y} outside the ${png.width}x${png.height} image`);
  }
}
