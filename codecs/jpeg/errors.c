/*
 * libjpeg's error and warning callbacks for both codecs (see codec.h).
 *
 * libjpeg recovers from damaged scan data by filling what it cannot read with grey and carrying
 * on with a warning, which would turn a cut-off or corrupt upload into a "successful" image. The
 * warnings listed in is_damage therefore fail the call like an error. The others are kept as the
 * message only:
 * - JWRN_EXTRANEOUS_DATA ("extraneous bytes before marker"): bytes between segments, or after a
 *   scan's data, that libjpeg skips; the image data is complete, and libvips decodes such files.
 *   Of the corpus JPEGs only the damaged bad-exif/corrupted.jpg warns at all (HIT_MARKER first,
 *   then MUST_RESYNC and EXTRANEOUS_DATA); every other file decodes without a warning.
 * - JWRN_ADOBE_XFORM (an unknown Adobe transform code: read as YCCK for 4 components, as libjpeg
 *   and libvips do), JWRN_JFIF_MAJOR (a newer JFIF version number), JWRN_BOGUS_ICC (an ICC
 *   segment whose sequence numbers do not add up: this module does not read ICC profiles).
 */
#include <string.h>

#include "codec.h"
#include "jerror.h"

static struct codec_guard *guard_of(j_common_ptr cinfo) {
  return (struct codec_guard *)cinfo->err; /* errors is the guard's first member */
}

static int is_damage(int message_code) {
  switch (message_code) {
    case JWRN_JPEG_EOF:          /* the file ends before the image does */
    case JWRN_HIT_MARKER:        /* a marker where scan data should be */
    case JWRN_HUFF_BAD_CODE:     /* corrupt scan data */
    case JWRN_MUST_RESYNC:       /* a restart marker missing or out of order */
    case JWRN_NOT_SEQUENTIAL:    /* scan parameters a sequential file cannot have */
    case JWRN_BOGUS_PROGRESSION: /* progressive scans out of order */
    case JWRN_TOO_MUCH_DATA:     /* more scan data than the frame holds */
      return 1;
    default:
      return 0;
  }
}

static int status_of_error(int message_code) {
  switch (message_code) {
    case JERR_OUT_OF_MEMORY:     /* malloc failed or memory.c refused (the object's limit) */
    case JERR_NO_BACKING_STORE:  /* a virtual array larger than the limit */
      return CODEC_OUT_OF_MEMORY;
    case JERR_BAD_STATE:         /* libjpeg called out of order: this module's own mistake */
    case JERR_VIRTUAL_BUG:       /* the packed backing store asked for rows it does not hold (memory.c) */
    case JERR_BAD_CROP_SPEC:
    case JERR_BAD_BUFFER_MODE:
    case JERR_BAD_STRUCT_SIZE:
    case JERR_BAD_LIB_VERSION:
      return CODEC_MISUSE;
    default:
      return CODEC_DAMAGED;      /* everything else is about the file's content */
  }
}

void codec_fail(struct codec_guard *guard, int status, const char *message) {
  if (message) {
    strncpy(guard->message, message, sizeof guard->message - 1);
    guard->message[sizeof guard->message - 1] = 0;
  }
  guard->status = status;
  longjmp(guard->jump, 1);
}

static void error_exit(j_common_ptr cinfo) {
  struct codec_guard *guard = guard_of(cinfo);
  (*cinfo->err->format_message)(cinfo, guard->message);
  codec_fail(guard, status_of_error(cinfo->err->msg_code), NULL);
}

/* Level -1 is a warning; 0 and above are trace messages, which are ignored. */
static void emit_message(j_common_ptr cinfo, int level) {
  if (level >= 0) return;
  struct codec_guard *guard = guard_of(cinfo);
  cinfo->err->num_warnings++;
  (*cinfo->err->format_message)(cinfo, guard->message);
#ifdef CODEC_PRINT_WARNINGS
  fprintf(stderr, "libjpeg warning %d: %s\n", cinfo->err->msg_code, guard->message);
  return;
#endif
  if (is_damage(cinfo->err->msg_code)) codec_fail(guard, CODEC_DAMAGED, NULL);
}

/* libjpeg prints messages through this; nothing is printed from inside the module. */
static void output_message(j_common_ptr cinfo) {
  (void)cinfo;
}

void codec_guard_init(struct codec_guard *guard, j_common_ptr common, size_t memory_limit) {
  memset(guard, 0, sizeof *guard);
  common->err = jpeg_std_error(&guard->errors);
  guard->errors.error_exit = error_exit;
  guard->errors.emit_message = emit_message;
  guard->errors.output_message = output_message;
  guard->memory_limit = memory_limit;
  common->client_data = guard;
}
