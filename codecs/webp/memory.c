/*
 * libwebp's src/utils/utils.c, compiled here in place of the library's own copy with malloc,
 * calloc and free counted against one limit (codec.h). utils.c is the only file of libwebp that
 * calls the C allocator (WebPSafeMalloc, WebPSafeCalloc, WebPSafeFree); including it with the three
 * names redirected counts every allocation of the library without changing its source.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "codec.h"

/* Each block starts with its size, padded to 16 bytes so the caller's pointer keeps malloc's alignment. */
#define HEADER 16

static size_t limit;
static size_t used;
static size_t peak;
static int failed;

static void *counted(void *block, size_t size) {
  if (block == NULL) {
    failed = CODEC_OUT_OF_MEMORY;
    return NULL;
  }
  *(size_t *)block = size;
  used += size;
  if (used > peak) peak = used;
  return (uint8_t *)block + HEADER;
}

static int refused(size_t size) {
  if (size > SIZE_MAX - HEADER || (limit && size > limit - used)) {
    failed = CODEC_OVER_LIMIT;
    return 1;
  }
  return 0;
}

static void *counted_malloc(size_t size) {
  return refused(size) ? NULL : counted(malloc(size + HEADER), size);
}

static void *counted_calloc(size_t count, size_t size) {
  /* WebPSafeCalloc has checked count * size against overflow and WEBP_MAX_ALLOCABLE_MEMORY. */
  size_t bytes = count * size;
  return refused(bytes) ? NULL : counted(calloc(1, bytes + HEADER), bytes);
}

static void counted_free(void *pointer) {
  if (pointer == NULL) return;
  uint8_t *block = (uint8_t *)pointer - HEADER;
  used -= *(size_t *)block;
  free(block);
}

void codec_memory_set_limit(size_t bytes) { limit = bytes; }
size_t codec_memory_used(void) { return used; }
size_t codec_memory_peak(void) { return peak; }
int codec_memory_failed(void) { return failed; }
void codec_memory_clear_failure(void) { failed = 0; }

int codec_status_of_decoding(VP8StatusCode status) {
  /* libwebp reports some failed allocations as bitstream errors (e.g. "Could not decode alpha data"). */
  if (failed) return failed;
  if (status == VP8_STATUS_OUT_OF_MEMORY) return CODEC_OUT_OF_MEMORY;
  switch (status) {
    case VP8_STATUS_OK:
      return CODEC_OK;
    case VP8_STATUS_UNSUPPORTED_FEATURE:
      return CODEC_UNSUPPORTED;
    case VP8_STATUS_INVALID_PARAM:
    case VP8_STATUS_USER_ABORT:
      return CODEC_MISUSE;
    default: /* BITSTREAM_ERROR, NOT_ENOUGH_DATA, SUSPENDED */
      return CODEC_DAMAGED;
  }
}

#define malloc(size) counted_malloc(size)
#define calloc(count, size) counted_calloc(count, size)
#define free(pointer) counted_free(pointer)
#include "src/utils/utils.c"
