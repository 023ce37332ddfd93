import type { AvifContainer, AvifLayer } from './container';

/*
 * What decoding an AVIF file holds, as functions of what its container and AV1 sequence headers
 * declare, for the pipeline's memory guard. Measured with src/image/avif/memory.test.ts on 1, 4,
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
 * dav1d's own buffers for decoding a frame besides its picture (block and loop-filter state, CDEF
 * and restoration lines...) and the heap's slack, per pixel of the frame: measured (wasm memory
 * minus 2 MiB, the item's data and the pictures) 0.17-0.48 bytes for 8-bit frames of 1 to 24 MP and
 * grid tiles, 0.36-0.61 for 10/12-bit ones; bounded here with a margin.
 */
const STATE_BYTES_PER_PIXEL = { 8: 0.7, 16: 0.9 };
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

/** dav1d's state for frames of width x height (see STATE_BYTES_PER_PIXEL). */
export function dav1dStateBytes(width: number, height: number, bitDepth: number): number {
  return STATE_FIXED_BYTES + width * height * STATE_BYTES_PER_PIXEL[bitDepth > 8 ? 16 : 8];
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
}

/**
 * Bytes of the dav1d instance at its fullest: its base, the largest item's data (copied in, freed
 * after its frame, but wasm memory never shrinks), the pictures held at once (colour and alpha:
 * a whole image, or one row of grid tiles) and the state for the largest frame.
 */
export function avifDecoderWasmBytes(color: LayerShape, alpha: LayerShape | null, largestItemBytes: number): number {
  let bytes = DAV1D_BASE_BYTES + largestItemBytes;
  let stateFor = color;
  for (const layer of alpha ? [color, alpha] : [color]) {
    const picture = dav1dPictureBytes(layer.imageWidth, layer.imageHeight, layer.format);
    bytes += picture * (layer.imagesHeld + (layer.filmGrain ? 1 : 0));
    if (layer.imageWidth * layer.imageHeight > stateFor.imageWidth * stateFor.imageHeight) stateFor = layer;
  }
  return bytes + dav1dStateBytes(stateFor.imageWidth, stateFor.imageHeight, Math.max(color.format.bitDepth, alpha?.format.bitDepth ?? 8));
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
 * The shape of a layer as verifyAvifContainer leaves it (it reads the stream's sequence header; av1C
 * is not trusted, real files have wrong ones). Without a sequence header read, the worst format.
 */
export function layerShape(layer: AvifLayer): LayerShape {
  const first = layer.tiles[0];
  const sequence = layer.sequence;
  return {
    imageWidth: first.size.width,
    imageHeight: first.size.height,
    imagesHeld: layer.grid ? layer.grid.columns : 1,
    format: sequence ?? WORST_FORMAT,
    filmGrain: sequence ? sequence.filmGrain : true,
  };
}

/** Both figures for one verified file (verifyAvifContainer's result). */
export function avifDecodeMemory(container: AvifContainer, regionWidth: number, bandRows: number): { wasmBytes: number; jsBytes: number } {
  const color = layerShape(container.color);
  const alpha = container.alpha && layerShape(container.alpha);
  let largestItem = 0;
  for (const layer of [container.color, container.alpha]) for (const image of layer?.tiles ?? []) largestItem = Math.max(largestItem, image.byteLength);
  return {
    wasmBytes: avifDecoderWasmBytes(color, alpha, largestItem),
    jsBytes: avifDecoderJsBytes(regionWidth, container.color.size.width, bandRows, container.color.grid !== null, color.format.bitDepth),
  };
}
