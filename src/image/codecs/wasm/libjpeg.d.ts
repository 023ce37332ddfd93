// The Emscripten module factory of libjpeg.js (built by codecs/jpeg/build.sh); libjpeg.ts states
// the functions it calls.
declare const factory: unknown;
export default factory;
