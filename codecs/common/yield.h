/*
 * Yield points for long work inside one call (a whole WebP encode, an AV1 frame, the scans of a
 * progressive JPEG): the call can let other requests in the same Worker isolate go on, as the band
 * pipeline does between bands. JavaScript sets codec_yielding only while it runs an entry point
 * through JSPI (WebAssembly.promising); js_yield is then a WebAssembly.Suspending import that
 * suspends this call when other requests wait (src/image/run-context.ts, yieldPoint). Outside such
 * a call nothing is called, since a Suspending import fails without promising on the stack.
 *
 * `pixels` is the work done since the last call: Workers report no time passing inside a
 * synchronous call, so the JavaScript side counts work to decide when to yield.
 * Definitions in yield.c.
 */
#ifndef CODEC_YIELD_H
#define CODEC_YIELD_H

#include <emscripten.h>

extern int codec_yielding;
void js_yield(int pixels);

static inline void codec_yield_point(int pixels) {
  if (codec_yielding) js_yield(pixels);
}

/*
 * Exports `<name>_entry`, the function pointer (an index in the module's function table) of the
 * entry point `name`, which JavaScript runs through JSPI: an optimised build renames its exports,
 * the table keeps the functions.
 */
#define CODEC_YIELDING_ENTRY(name) \
  EMSCRIPTEN_KEEPALIVE void *name##_entry(void) { return (void *)name; }

#endif
