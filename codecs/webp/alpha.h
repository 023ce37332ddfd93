/* A compact ALPH chunk's data for large pictures (alpha.c). */
#ifndef ALPHA_H
#define ALPHA_H

#include <stddef.h>
#include <stdint.h>

/*
 * Codes the width x height plane (rows `stride` apart) as an ALPH chunk's data (its header byte
 * first) in a buffer from WebPSafeMalloc: a WebP lossless image-stream, or the plane as it is where
 * that would not be smaller. 0 if out of memory (codec_memory_failed says why).
 */
int alpha_encode_compact(const uint8_t *plane, int stride, int width, int height, uint8_t **out, size_t *out_size);

#endif
