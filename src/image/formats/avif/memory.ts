import type { AvifContainer, AvifLayer } from './container';
import { planAvifLayout } from './encode-layout';

/*
 * What decoding an AVIF file holds, as functions of what its container and AV1 sequence headers
 * declare, for the pipeline's memory guard. Measured on 1, 4,
 * 12 and 24 MP files at every bit depth and chroma layout and on grids (README of this module's
 * commit); the figures below are upper bounds of those measurements.
 */

const MiB = 2 ** 20;

/**
 * A fresh dav1d instance before its first frame: 2 MiB of initial memory (1 MiB of it the stack
 * dav1d decodes on) plus what dav1d_open allocates.
 */
export const DAV1D_BASE_BYTES = 2.5 * MiB;

/**
 * dav1d's own buffers for decoding a frame besides its picture and the heap's slack, per pixel of
 * the frame. Most are per 4x4 block whatever the format (loop-filter levels and masks: about 0.33
 * bytes a pixel); CDEF keeps 4 luma and 8 chroma lines per row of 64 px superblocks (src/decode.c,
 * dav1d_decode_frame_init), 1/16 byte a pixel per sample size and chroma plane width. Measured
 * (wasm memory minus the base, the item's data and the picture) for single 8-bit items: 0.50 at
 * 24 and 48 MP 4:2:0, 0.57 at 24 MP 4:4:4; earlier 0.17-0.48 for 1 to 24 MP and grid tiles, 0.36-0.61
 * for 10/12-bit ones. Bounded with a margin.
 */
const STATE_BYTES_PER_PIXEL = { 8: 0.45, 16: 0.65 };
const CDEF_LINE_BYTES_PER_PIXEL = 12 / 64;
const STATE_FIXED_BYTES = 0.5 * MiB;

export interface Av1Format {
  bitDepth: 8 | 10 | 12;
  monochrome: boolean;
  subsamplingX: 0 | 1;
  subsamplingY: 0 | 1;
}

/** Bytes dav1d's default allocator takes for one picture (src/picture.c, dav1d_default_picture_alloc). */
export function dav1dPictureBytes(width: number, height: number, format: Av1Format): number {
  const sampleBytes = format.bitDepth > 8 ? 2 : 1;
  const alignedWidth = Math.ceil(width / 128) * 128;
  const alignedHeight = Math.ceil(height / 128) * 128;
  let lumaStride = alignedWidth * sampleBytes;
  let chromaStride = format.monochrome ? 0 : lumaStride >> format.subsamplingX;
  if (lumaStride % 1024 === 0) lumaStride += 64;
  if (chromaStride % 1024 === 0 && chromaStride > 0) chromaStride += 64;
  return lumaStride * alignedHeight + 2 * chromaStride * (alignedHeight >> format.subsamplingY) + 64;
}

/**
 * Bytes of a windowed decode's buffer (codecs/dav1d/avif_dav1d.c, alloc_window): the picture's
 * strides, two rows of superblocks and 64 rows (at most the picture's own rows).
 */
export function dav1dWindowBytes(width: number, height: number, format: Av1Format, superblock: 64 | 128): number {
  return dav1dPictureBytes(width, Math.min(height, 2 * superblock + 64), format);
}

/** dav1d's state for frames of width x height (see STATE_BYTES_PER_PIXEL). */
export function dav1dStateBytes(width: number, height: number, format: Av1Format): number {
  const sampleBytes = format.bitDepth > 8 ? 2 : 1;
  const chromaWidth = format.monochrome ? 0 : 1 / (1 + format.subsamplingX); // of a chroma plane, as a share of the luma width
  const cdefLines = (CDEF_LINE_BYTES_PER_PIXEL * sampleBytes * (1 + 2 * chromaWidth)) / 3;
  return STATE_FIXED_BYTES + width * height * (STATE_BYTES_PER_PIXEL[sampleBytes === 2 ? 16 : 8] + cdefLines);
}

export interface LayerShape {
  /** One image's size: the item's, or a grid tile's. */
  imageWidth: number;
  imageHeight: number;
  /** Images held at once: 1, or a grid's columns (one row of tiles). */
  imagesHeld: number;
  format: Av1Format;
  /** The stream may carry film grain: dav1d applies it into a second picture. */
  filmGrain: boolean;
  /** The stream may use superres: dav1d decodes the narrower coded frame into a second picture. */
  superres: boolean;
  /** A single frame decoded into a window of rows (DecodeOptions.rowWindow), not a whole picture. */
  windowed?: boolean;
  /** Superblock size (128 unless the sequence header says 64). */
  superblock: 64 | 128;
}

/**
 * Bytes of the dav1d instances at their fullest. Whole pictures are decoded by one instance, one
 * after another; windowed ones each in an instance of their own (decode.ts), colour and alpha at
 * once.
 */
export function avifDecoderWasmBytes(color: LayerShape, alpha: LayerShape | null, largestItemBytes: number): number {
  if (color.windowed && alpha) return instanceBytes([color], largestItemBytes) + instanceBytes([alpha], largestItemBytes);
  return instanceBytes(alpha ? [color, alpha] : [color], largestItemBytes);
}

/**
 * One instance: its base, the largest item's data (copied in, freed after its frame, but wasm
 * memory never shrinks), the pictures held at once (colour and alpha: a whole image, a window of
 * rows, or one row of grid tiles) and the state for the largest frame.
 */
function instanceBytes(layers: LayerShape[], largestItemBytes: number): number {
  let bytes = DAV1D_BASE_BYTES + largestItemBytes;
  let state = 0;
  for (const layer of layers) {
    if (layer.windowed) {
      bytes += dav1dWindowBytes(layer.imageWidth, layer.imageHeight, layer.format, layer.superblock);
    } else {
      const picture = dav1dPictureBytes(layer.imageWidth, layer.imageHeight, layer.format);
      // Film grain and superres each take a second picture while a frame is decoded or output, one at a time.
      bytes += picture * (layer.imagesHeld + (layer.filmGrain ? 1 : 0) + (layer.superres ? 1 : 0));
    }
    // One frame is decoded at a time; the state is kept for the largest.
    state = Math.max(state, dav1dStateBytes(layer.imageWidth, layer.imageHeight, layer.format));
  }
  return bytes + state;
}

/**
 * JavaScript bytes the band decoder holds besides its input: the band (bandRows x width RGBA), the
 * conversion's tables and chroma rows, and for a grid the rows it assembles from tiles (two per
 * plane, 2 bytes a sample above 8 bits). `width` is the decoded region's, `imageWidth` the image's.
 */
export function avifDecoderJsBytes(width: number, imageWidth: number, bandRows: number, grid: boolean, bitDepth: number): number {
  const band = 4 * width * Math.max(1, bandRows) + 8 * width; // + alpha as floats for premultiplied images
  const tables = 8 * 2 ** bitDepth + 3 * 4 * 1024 + 8 * (imageWidth + 4); // luma, clamp, blended chroma rows
  const assembledRows = grid ? 2 * 3 * imageWidth * (bitDepth > 8 ? 2 : 1) * 2 : 0; // colour and alpha layers
  return band + tables + assembledRows;
}

/** The costliest format: 16-bit samples, no chroma subsampling. */
const WORST_FORMAT: Av1Format = { bitDepth: 12, monochrome: false, subsamplingX: 0, subsamplingY: 0 };

/**
 * The shape of a layer from its first image's sequence header as the header read it (av1C is not
 * trusted, real files have wrong ones). Without a sequence header at the head of its data, the
 * worst format.
 */
export function layerShape(layer: AvifLayer): LayerShape {
  const first = layer.tiles[0];
  const sequence = first.sequence;
  return {
    imageWidth: first.size.width,
    imageHeight: first.size.height,
    imagesHeld: layer.grid ? layer.grid.columns : 1,
    format: sequence ?? WORST_FORMAT,
    filmGrain: sequence ? sequence.filmGrain : true,
    superres: sequence ? sequence.superres : true,
    superblock: sequence && !sequence.superblock128 ? 64 : 128,
  };
}

/**
 * Whether the image can be decoded into windows of rows: a single colour frame (a grid's tiles are
 * small already) and no alpha or a single alpha frame, whose sequence headers rule out film grain
 * and superres (each writes a second whole picture). A frame that uses intra block copy still
 * needs the whole picture, which the decoder finds at its frame header (dav1d.ts, WHOLE_FRAME).
 */
export function windowable(container: AvifContainer): boolean {
  const { color, alpha } = container;
  return singleWindowable(color) && (!alpha || singleWindowable(alpha));
}

/**
 * A windowed decode of the image cannot turn out to need the whole picture: it is windowable and
 * no frame's header lets it use intra block copy (sequence-header.ts firstFrameMayCopyIntraBlocks).
 */
export function windowAlwaysSuffices(container: AvifContainer): boolean {
  return windowable(container) && [container.color, container.alpha].every((layer) => !layer || layer.tiles.every((image) => image.mayCopyIntraBlocks === false));
}

function singleWindowable(layer: AvifLayer): boolean {
  const sequence = layer.tiles[0].sequence;
  return !layer.grid && sequence !== null && sequence !== undefined && !sequence.filmGrain && !sequence.superres;
}

/** Both figures for one file's container. */
export function avifDecodeMemory(container: AvifContainer, regionWidth: number, bandRows: number, windowed = false): { wasmBytes: number; jsBytes: number } {
  const inWindows = windowed && windowable(container);
  const color = { ...layerShape(container.color), windowed: inWindows };
  const alpha = container.alpha && { ...layerShape(container.alpha), windowed: inWindows };
  let largestItem = 0;
  for (const layer of [container.color, container.alpha]) for (const image of layer?.tiles ?? []) largestItem = Math.max(largestItem, image.byteLength);
  return {
    wasmBytes: avifDecoderWasmBytes(color, alpha, largestItem),
    jsBytes: avifDecoderJsBytes(regionWidth, container.color.size.width, bandRows, container.color.grid !== null, color.format.bitDepth),
  };
}

/**
 * What decoding a result of `avifEncoder` holds (its file counted apart): its layout's tiles
 * (encode-layout.ts), 8-bit 4:2:0 colour and monochrome alpha, one row of tiles decoded at a time,
 * each tile's data at most its share of the bound.
 */
export function avifResultDecodeBytes(width: number, height: number, alpha: boolean, quality: number, bandRows: number): number {
  const { columns, rows, tileWidth, tileHeight } = planAvifLayout(width, height, alpha);
  const grid = columns * rows > 1;
  const layer = (monochrome: boolean): LayerShape => ({
    imageWidth: tileWidth,
    imageHeight: tileHeight,
    imagesHeld: grid ? columns : 1,
    format: { bitDepth: 8, monochrome, subsamplingX: monochrome ? 0 : 1, subsamplingY: monochrome ? 0 : 1 },
    filmGrain: false,
    superres: false,
    superblock: 128,
  });
  const largestItem = avifEncodedBytes(tileWidth, tileHeight, alpha, quality);
  return avifDecoderWasmBytes(layer(false), alpha ? layer(true) : null, largestItem) + avifDecoderJsBytes(width, width, bandRows, grid, 8);
}

/*
 * What `avifEncoder` holds for a width x height result, as measured upper bounds for the memory
 * plan (bytes). Measured with jSquash's encoder on white noise (the largest output) and on photos.
 */

/**
 * The encoder instance's WebAssembly memory. It starts at 16 MiB and no tile of at most 512 x 512
 * (alpha included) grew it; larger tiles (only where AVIF_MAX_ITEMS makes the grid's tiles grow)
 * grew it with their area, at most by 24 MiB for 1024 x 1024 (640: 19.25 MiB, 768: 23.1). A single
 * item (at most 512 x 512 pixels) grows with its longer side: 4096 x 64 took 19.25 MiB, 8000 x 32
 * 23.1 MiB, 12000 x 21 27.75 MiB.
 */
export function avifEncoderWasmBytes(width: number, height: number, alpha = false): number {
  const { columns, rows, tileWidth, tileHeight } = planAvifLayout(width, height, alpha);
  if (columns * rows > 1) return 16 * MiB + Math.max(0, tileWidth * tileHeight - 512 * 512) * ((24 * MiB) / (1024 * 1024 - 512 * 512));
  return Math.max(16 * MiB, 15 * MiB + 1126 * Math.max(width, height));
}

/**
 * JavaScript buffers while encoding: one row of tiles (tileHeight rows of the padded width, RGBA),
 * the tile being encoded, and the encoder's file for that tile with the AV1 data cut from it.
 */
export function avifEncoderBufferBytes(width: number, height: number, alpha: boolean, quality: number): number {
  const { columns, tileWidth, tileHeight } = planAvifLayout(width, height, alpha);
  return tileHeight * columns * tileWidth * 4 + tileWidth * tileHeight * 4 + 2 * avifEncodedBytes(tileWidth, tileHeight, alpha, quality);
}

/**
 * Bytes a pixel at most, measured on white noise (the largest output): colour, and what alpha adds.
 * Photos at quality 80 take about 0.16.
 */
const BYTES_PER_PIXEL = [
  { upToQuality: 40, color: 0.6, alpha: 0.5 }, // noise: 0.51 (8000 x 32), with alpha 0.96
  { upToQuality: 60, color: 0.85, alpha: 0.7 }, // 0.76 (8000 x 32), with alpha 1.36
  { upToQuality: 70, color: 0.95, alpha: 0.75 }, // 0.84 (8000 x 32), with alpha 1.50
  { upToQuality: 80, color: 1.0, alpha: 0.75 }, // noise: 0.87 (0.97 for 12000 x 21), with alpha 1.58
  { upToQuality: 85, color: 1.1, alpha: 0.85 }, // 0.97, with alpha 1.75
  { upToQuality: 90, color: 1.2, alpha: 0.95 }, // 1.08 (1.17 for 12000 x 21), with alpha 1.97
  { upToQuality: 95, color: 1.4, alpha: 1.1 }, // 1.28 (1.38 for 12000 x 21), with alpha 2.34
  { upToQuality: 100, color: 1.9, alpha: 1.35 }, // 1.85, with alpha 3.17
];

/** The boxes before the image data: 64 KiB for up to 24 x 24 tiles twice over. */
const AVIF_BOXES_BYTES = 64 * 1024;

/** The file's size at most for `quality` (1..100), boxes included. */
export function avifEncodedBytes(width: number, height: number, alpha: boolean, quality: number): number {
  const step = BYTES_PER_PIXEL.find((candidate) => quality <= candidate.upToQuality) ?? BYTES_PER_PIXEL[BYTES_PER_PIXEL.length - 1];
  return Math.ceil(width * height * (step.color + (alpha ? step.alpha : 0))) + AVIF_BOXES_BYTES;
}

/**
 * The most the encoder holds at once besides its file: its instance and buffers, and the encoded
 * tiles (at most `encodedBytes`: the file's bound or the plan's cap), kept until the container can
 * be written around them.
 */
export function avifEncoderPeakBytes(width: number, height: number, alpha: boolean, quality: number, encodedBytes: number): number {
  return avifEncoderWasmBytes(width, height, alpha) + avifEncoderBufferBytes(width, height, alpha, quality) + encodedBytes;
}

/** The file goes out a tile at a time after the boxes (grid-writer.ts): the largest of those pieces. */
export function avifWriteBurstBytes(width: number, height: number, alpha: boolean, quality: number): number {
  const { tileWidth, tileHeight } = planAvifLayout(width, height, alpha);
  return avifEncodedBytes(Math.min(width, tileWidth), Math.min(height, tileHeight), alpha, quality) + AVIF_BOXES_BYTES;
}

