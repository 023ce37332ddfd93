// The Emscripten module factory of libwebp.js (built by codecs/webp/build.sh); libwebp.ts states
// the functions it calls.
declare const factory: unknown;
export default factory;
