/*
 * libjpeg's system-dependent memory functions (jmemsys.h), in place of jmemnobs.c: malloc and
 * free, counted per libjpeg object against the limit given at create (codec_guard.memory_limit).
 * jmemnobs.c applies libjpeg's max_memory_to_use only to the whole-image buffers (virtual arrays);
 * counting every allocation here means no file can make libjpeg take more than the caller planned,
 * whatever part of libjpeg asks. Over the limit an allocation fails, and libjpeg stops with
 * JERR_OUT_OF_MEMORY (CODEC_OUT_OF_MEMORY).
 *
 * A whole-image coefficient buffer (a decoder's for a progressive or multi-scan file, an encoder's
 * for optimised Huffman tables: 128 bytes an 8x8 block) that does not fit the limit goes to
 * libjpeg's backing store, which here is not a file but the rows of blocks packed in memory: per
 * block a 64-bit mask of its non-zero coefficients, then their values. libjpeg keeps a strip of
 * rows unpacked (STRIP_BYTES) and moves rows in and out of the store as each pass goes down the
 * image (jmemmgr.c, do_barray_io, whole rows only); a photo's blocks pack to about a third of their
 * size. For a decoder the caller plans for the packed rows' bound (src/image/formats/jpeg/memory.ts:
 * every non-zero AC coefficient costs its scan at least two bits); an encoder's have no bound below
 * the buffer itself, so it is given an allowance, and a picture that needs more fails with
 * CODEC_OUT_OF_MEMORY before any of the file is written.
 */
#define JPEG_INTERNALS
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <wasm_simd128.h>

#include "codec.h"
#include "jerror.h"
#include "jmemsys.h"

/* What a decoder's coefficient buffer keeps unpacked when it goes to the store (at least 5 iMCU rows of each component). */
#define STRIP_BYTES (4 << 20)

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
 * Everything asked for where it fits the limit (or there is none); otherwise the strip: the
 * whole-image buffers then go to the packed store (a decoder's coefficients of several scans, an
 * encoder's for optimised Huffman tables, which it writes once and reads back once).
 */
GLOBAL(size_t) jpeg_mem_available(j_common_ptr cinfo, size_t min_bytes_needed, size_t max_bytes_needed,
                                  size_t already_allocated) {
  (void)min_bytes_needed, (void)already_allocated;
  struct codec_guard *guard = guard_of(cinfo);
  if (!guard->memory_limit) return max_bytes_needed;
  size_t left = guard->memory_limit > guard->memory_used ? guard->memory_limit - guard->memory_used : 0;
  return max_bytes_needed <= left ? max_bytes_needed : STRIP_BYTES;
}

/* The packed rows of one whole-image block array. */
struct packed_rows {
  long row_bytes, rows;
  unsigned char **row;   /* packed data of each row, NULL until written */
  size_t *size;          /* bytes allocated for each */
  unsigned char *scratch; /* a row packed, at most 8 + 128 bytes a block */
};

static size_t pack_row(const JCOEF *coefficients, long blocks, unsigned char *out) {
  unsigned char *at = out;
  for (long b = 0; b < blocks; b++, coefficients += DCTSIZE2) {
    uint64_t mask = 0;
    for (int i = 0; i < DCTSIZE2 / 8; i++) {
      v128_t v = wasm_v128_load(coefficients + 8 * i);
      mask |= (uint64_t)wasm_i16x8_bitmask(wasm_i16x8_ne(v, wasm_i16x8_splat(0))) << (8 * i);
    }
    memcpy(at, &mask, 8);
    at += 8;
    for (; mask; mask &= mask - 1, at += 2) memcpy(at, &coefficients[__builtin_ctzll(mask)], 2);
  }
  return (size_t)(at - out);
}

static void unpack_row(const unsigned char *in, long blocks, JCOEF *coefficients) {
  memset(coefficients, 0, (size_t)blocks * sizeof(JBLOCK));
  for (long b = 0; b < blocks; b++, coefficients += DCTSIZE2) {
    uint64_t mask;
    memcpy(&mask, in, 8);
    in += 8;
    for (; mask; mask &= mask - 1, in += 2) memcpy(&coefficients[__builtin_ctzll(mask)], in, 2);
  }
}

/* The rows [first, first + count) that an I/O of whole rows at `offset` covers. */
static long rows_at(j_common_ptr cinfo, struct packed_rows *store, long offset, long byte_count, long *count) {
  if (offset % store->row_bytes || byte_count % store->row_bytes) ERREXIT(cinfo, JERR_VIRTUAL_BUG);
  long first = offset / store->row_bytes;
  *count = byte_count / store->row_bytes;
  if (first < 0 || *count < 0 || first + *count > store->rows) ERREXIT(cinfo, JERR_VIRTUAL_BUG);
  return first;
}

METHODDEF(void) write_packed(j_common_ptr cinfo, backing_store_ptr info, void *buffer, long offset, long byte_count) {
  struct packed_rows *store = info->rows;
  long count, first = rows_at(cinfo, store, offset, byte_count, &count);
  long blocks = store->row_bytes / (long)sizeof(JBLOCK);
  for (long r = 0; r < count; r++) {
    size_t bytes = pack_row((const JCOEF *)((const char *)buffer + r * store->row_bytes), blocks, store->scratch);
    long at = first + r;
    /* A row grows as scans add coefficients; it is reallocated only then, at its packed size. */
    if (bytes > store->size[at]) {
      if (store->row[at]) put(cinfo, store->row[at], store->size[at]);
      store->row[at] = NULL;
      store->size[at] = 0;
      store->row[at] = get(cinfo, bytes);
      if (!store->row[at]) ERREXIT1(cinfo, JERR_OUT_OF_MEMORY, 12);
      store->size[at] = bytes;
    }
    memcpy(store->row[at], store->scratch, bytes);
  }
}

METHODDEF(void) read_packed(j_common_ptr cinfo, backing_store_ptr info, void *buffer, long offset, long byte_count) {
  struct packed_rows *store = info->rows;
  long count, first = rows_at(cinfo, store, offset, byte_count, &count);
  long blocks = store->row_bytes / (long)sizeof(JBLOCK);
  for (long r = 0; r < count; r++) {
    /* libjpeg reads only rows it wrote (jmemmgr.c, first_undef_row). */
    if (!store->row[first + r]) ERREXIT(cinfo, JERR_VIRTUAL_BUG);
    unpack_row(store->row[first + r], blocks, (JCOEF *)((char *)buffer + r * store->row_bytes));
  }
}

METHODDEF(void) close_packed(j_common_ptr cinfo, backing_store_ptr info) {
  struct packed_rows *store = info->rows;
  if (!store) return;
  for (long r = 0; r < store->rows; r++) {
    if (store->row[r]) put(cinfo, store->row[r], store->size[r]);
  }
  put(cinfo, store->scratch, (size_t)(store->row_bytes / (long)sizeof(JBLOCK)) * (8 + sizeof(JBLOCK)));
  put(cinfo, store->size, (size_t)store->rows * sizeof *store->size);
  put(cinfo, store->row, (size_t)store->rows * sizeof *store->row);
  put(cinfo, store, sizeof *store);
  info->rows = NULL;
}

/* Only block arrays (row_bytes set by the build script's patch of jmemmgr.c) have a store. */
GLOBAL(void) jpeg_open_backing_store(j_common_ptr cinfo, backing_store_ptr info, long total_bytes_needed) {
  if (info->row_bytes <= 0 || total_bytes_needed % info->row_bytes) ERREXIT(cinfo, JERR_NO_BACKING_STORE);
  struct packed_rows *store = get(cinfo, sizeof *store);
  if (!store) ERREXIT1(cinfo, JERR_OUT_OF_MEMORY, 10);
  memset(store, 0, sizeof *store);
  info->rows = store;
  info->read_backing_store = read_packed;
  info->write_backing_store = write_packed;
  info->close_backing_store = close_packed;
  store->row_bytes = info->row_bytes;
  long rows = total_bytes_needed / info->row_bytes;
  store->row = get(cinfo, (size_t)rows * sizeof *store->row);
  if (store->row) store->size = get(cinfo, (size_t)rows * sizeof *store->size);
  if (store->size) store->scratch = get(cinfo, (size_t)(info->row_bytes / (long)sizeof(JBLOCK)) * (8 + sizeof(JBLOCK)));
  if (!store->scratch) ERREXIT1(cinfo, JERR_OUT_OF_MEMORY, 11);
  store->rows = rows;
  memset(store->row, 0, (size_t)rows * sizeof *store->row);
  memset(store->size, 0, (size_t)rows * sizeof *store->size);
}

/* libjpeg's max_memory_to_use, reported as the same limit (0: none). */
GLOBAL(long) jpeg_mem_init(j_common_ptr cinfo) {
  return (long)guard_of(cinfo)->memory_limit;
}

GLOBAL(void) jpeg_mem_term(j_common_ptr cinfo) {
  (void)cinfo;
}
