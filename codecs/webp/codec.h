/*
 * Shared by the band decoder (decoder.c, lossless_rows.c) and the picture encoder (encoder.c) on
 * libwebp: the status codes the entry points return and the memory accounting of memory.c.
 *
 * libwebp reports failures through return values (VP8StatusCode, WebPEncodingError), never by
 * aborting, so every entry point simply returns a status; the module never traps on a bad file.
 */
#ifndef WEBP_CODEC_H
#define WEBP_CODEC_H

#include <stddef.h>

#include "src/webp/decode.h"
#include "src/webp/encode.h"

/* What an entry point returns (negative) besides its result; JavaScript turns these into errors. */
enum codec_status {
  CODEC_OK = 0,
  /* The file is damaged: truncated, or a bitstream libwebp cannot parse. */
  CODEC_DAMAGED = -1,
  /* malloc failed: the WebAssembly memory could not grow. */
  CODEC_OUT_OF_MEMORY = -2,
  /* A valid file using something this module does not decode (an animation passed as a still). */
  CODEC_UNSUPPORTED = -3,
  /* Arguments or call order the entry point does not accept: a bug in the caller. */
  CODEC_MISUSE = -4,
  /* The encoder's output would break a format limit (partition 0 over 512 KB, a file over 4 GB). */
  CODEC_TOO_BIG = -5,
  /* An allocation would have taken libwebp past the limit the caller set (codec_memory_set_limit). */
  CODEC_OVER_LIMIT = -6,
};

/*
 * Every allocation of libwebp and of the entry points goes through WebPSafeMalloc/Calloc/Free,
 * which memory.c counts against one limit for the whole instance (an instance serves one job).
 * libwebp sizes most of its buffers from the header's width and height, but a lossless bitstream
 * can also ask for Huffman tables of up to 65,536 groups (about 20 KB each) from a small file; the
 * limit turns such a request into CODEC_OUT_OF_MEMORY instead of growing the WebAssembly memory
 * past what the caller planned for.
 */
void codec_memory_set_limit(size_t bytes); /* 0: no limit */
size_t codec_memory_used(void);
size_t codec_memory_peak(void);
/* 0, or CODEC_OVER_LIMIT / CODEC_OUT_OF_MEMORY once an allocation failed since the last codec_memory_clear_failure(). */
int codec_memory_failed(void);
void codec_memory_clear_failure(void);

/* The codec_status for a libwebp decoding status (a failed allocation wins over what libwebp said). */
int codec_status_of_decoding(VP8StatusCode status);

#endif
