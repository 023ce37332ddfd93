// The Emscripten module factory of png-zlib.js (built by codecs/png/build.sh); formats/png/png-zlib.ts
// states the functions it calls.
declare const factory: unknown;
export default factory;
