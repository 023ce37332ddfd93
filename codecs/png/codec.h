/*
 * Shared by the PNG band decoder (decoder.c) and band encoder (encoder.c), both on zlib: the
 * statuses their entry points return, and the message kept with a failure.
 */
#ifndef PNG_CODEC_H
#define PNG_CODEC_H

/* What an entry point returns when it fails; JavaScript turns these into the project's errors. */
enum codec_status {
  /* The image data is damaged: corrupt or truncated zlib data, a bad filter type, missing rows. */
  CODEC_DAMAGED = -1,
  /* malloc or zlib's allocator failed (the module's memory cannot grow further). */
  CODEC_OUT_OF_MEMORY = -2,
  /* Arguments or call order the entry point does not accept: a bug in the caller. */
  CODEC_MISUSE = -4,
};

#define CODEC_MESSAGE_BYTES 160

#endif
