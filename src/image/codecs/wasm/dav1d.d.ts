// The Emscripten module factory of dav1d.js (built by codecs/dav1d/build.sh); src/image/formats/avif/dav1d.ts
// states the functions it calls.
declare const factory: unknown;
export default factory;
