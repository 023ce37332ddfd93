/* The definitions behind yield.h, linked once into each module that has yield points. */
#include "yield.h"

/* Replaced at instantiation by a WebAssembly.Suspending function (src/image/codecs/codec.ts); never run. */
EM_JS(void, js_yield, (int pixels), {});

int codec_yielding;

/* Set by JavaScript around an entry point it runs through JSPI. */
EMSCRIPTEN_KEEPALIVE void codec_set_yielding(int on) { codec_yielding = on; }
