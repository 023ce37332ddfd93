/*
 * Shared by the band decoder (decoder.c) and the band encoder (encoder.c): how libjpeg's errors,
 * warnings and allocations reach the caller. Every entry point sets a setjmp target before calling
 * libjpeg; libjpeg's error_exit, a warning that means damaged data, a failed allocation and the
 * decoder's work limit all longjmp back to it, and the entry point returns a negative status. The
 * module never traps on a bad file.
 */
#ifndef CODEC_H
#define CODEC_H

#include <setjmp.h>
#include <stddef.h>
#include <stdio.h>

#include "jpeglib.h"

/* What an entry point returns; JavaScript turns these into the project's errors. */
enum codec_status {
  CODEC_OK = 0,
  /* The file is damaged: a libjpeg error, or a warning about missing or corrupt data. */
  CODEC_DAMAGED = -1,
  /* libjpeg ran out of memory: malloc failed or the object's memory limit was reached. */
  CODEC_OUT_OF_MEMORY = -2,
  /* The decoder's work limit (scans, block passes) was exceeded. */
  CODEC_WORK_LIMIT = -3,
  /* Arguments or call order the entry point does not accept: a bug in the caller. */
  CODEC_MISUSE = -4,
};

/*
 * One per libjpeg object, reached through cinfo->client_data. `errors` must stay the first member:
 * libjpeg hands error callbacks the jpeg_error_mgr, and the guard is found from it.
 */
struct codec_guard {
  struct jpeg_error_mgr errors;
  jmp_buf jump;
  /* CODEC_OK until something failed; then the status every later call returns. */
  int status;
  /* Bytes libjpeg may obtain through memory.c for this object (0: no limit) and has now. */
  size_t memory_limit;
  size_t memory_used;
  /* The most memory_used was (for measuring the cost formulas of the JavaScript side). */
  size_t memory_peak;
  /* The error or the last warning, for logs. */
  char message[JMSG_LENGTH_MAX];
};

/*
 * Installs the error handlers on `guard` and points `common` at it. Call before
 * jpeg_create_(de)compress, which allocates through memory.c and therefore needs the limit.
 */
void codec_guard_init(struct codec_guard *guard, j_common_ptr common, size_t memory_limit);

/* Records `status` and `message` (if not NULL) and longjmps to guard->jump. Never returns. */
void codec_fail(struct codec_guard *guard, int status, const char *message);

#endif
