/*
 * libjpeg's system-dependent memory functions (jmemsys.h), in place of jmemnobs.c: malloc and
 * free, counted per libjpeg object against the limit given at create (codec_guard.memory_limit).
 * jmemnobs.c applies libjpeg's max_memory_to_use only to the whole-image buffers (virtual arrays);
 * counting every allocation here means no file can make libjpeg take more than the caller planned,
 * whatever part of libjpeg asks. Over the limit an allocation fails, and libjpeg stops with
 * JERR_OUT_OF_MEMORY (CODEC_OUT_OF_MEMORY).
 */
#define JPEG_INTERNALS
#include <stdlib.h>

#include "codec.h"
#include "jmemsys.h"

static struct codec_guard *guard_of(j_common_ptr cinfo) {
  return (struct codec_guard *)cinfo->client_data;
}

static void *get(j_common_ptr cinfo, size_t size) {
  struct codec_guard *guard = guard_of(cinfo);
  if (guard->memory_limit && size > guard->memory_limit - guard->memory_used) return NULL;
  void *object = malloc(size);
  if (object) guard->memory_used += size;
  if (guard->memory_used > guard->memory_peak) guard->memory_peak = guard->memory_used;
  return object;
}

static void put(j_common_ptr cinfo, void *object, size_t size) {
  free(object);
  guard_of(cinfo)->memory_used -= size;
}

GLOBAL(void *) jpeg_get_small(j_common_ptr cinfo, size_t sizeofobject) {
  return get(cinfo, sizeofobject);
}

GLOBAL(void) jpeg_free_small(j_common_ptr cinfo, void *object, size_t sizeofobject) {
  put(cinfo, object, sizeofobject);
}

GLOBAL(void *) jpeg_get_large(j_common_ptr cinfo, size_t sizeofobject) {
  return get(cinfo, sizeofobject);
}

GLOBAL(void) jpeg_free_large(j_common_ptr cinfo, void *object, size_t sizeofobject) {
  put(cinfo, object, sizeofobject);
}

/*
 * Always "everything asked for": a whole-image buffer then either fits the limit or fails in
 * jpeg_get_large, and the backing store (temporary files) is never used.
 */
GLOBAL(size_t) jpeg_mem_available(j_common_ptr cinfo, size_t min_bytes_needed, size_t max_bytes_needed,
                                  size_t already_allocated) {
  (void)cinfo, (void)min_bytes_needed, (void)already_allocated;
  return max_bytes_needed;
}

GLOBAL(void) jpeg_open_backing_store(j_common_ptr cinfo, backing_store_ptr info, long total_bytes_needed) {
  (void)info, (void)total_bytes_needed;
  ERREXIT(cinfo, JERR_NO_BACKING_STORE);
}

/* libjpeg's max_memory_to_use, reported as the same limit (0: none). */
GLOBAL(long) jpeg_mem_init(j_common_ptr cinfo) {
  return (long)guard_of(cinfo)->memory_limit;
}

GLOBAL(void) jpeg_mem_term(j_common_ptr cinfo) {
  (void)cinfo;
}
