# Sourced by codecs/build.sh: the pipeline's own WebAssembly kernels (no upstream library), as
# src/image/codecs/wasm/kernels.wasm: the Lanczos-3 passes of src/image/stages/resize.ts
# (codecs/kernels/resize.c) and the blur, sharpen and grayscale steps (codecs/kernels/filters.c,
# with musl's cbrt). A standalone module without Emscripten's JavaScript: it imports its memory,
# which each stage sizes and lays out itself (src/image/stages/kernel-memory.ts), and needs
# nothing else.

KERNELS_CFLAGS=(-O3 -msimd128 -mnontrapping-fptoint -DNDEBUG)
# 64 KiB of memory at least; the module's static data and 4 KiB stack (which the kernels do not use) lie at its start.
KERNELS_LINK_FLAGS=(--no-entry -sSTANDALONE_WASM=1 -sIMPORTED_MEMORY=1 -sINITIAL_MEMORY=64KB -sTOTAL_STACK=4KB -sALLOW_MEMORY_GROWTH=1)
KERNELS_ENTRY_POINTS=(codecs/kernels/resize.c codecs/kernels/filters.c)
KERNELS_EXPORTS=(_h_row_opaque _v_row_opaque _premultiply_row _h_row_premultiplied _h_row_premultiply _v_row_premultiply _h_row_unpremultiply _v_row_unpremultiply _unpremultiply_row
  _gauss_init _gauss_wants_input _gauss_push _gauss_emit _blur_push _blur_emit _grayscale_tables _grayscale_row _sharpen_init _sharpen_lightness _sharpen_emit)

build_kernels() {
  local exports
  exports=$(IFS=,; echo "${KERNELS_EXPORTS[*]}")
  emcc "${KERNELS_CFLAGS[@]}" "$here/kernels/resize.c" "$here/kernels/filters.c" "${KERNELS_LINK_FLAGS[@]}" -sEXPORTED_FUNCTIONS="$exports" -o "$out/kernels.wasm"
  # What kernel-memory.ts relies on: the memory is the one import, and the module's static data and
  # stack end below 8 KiB, where the buffers it is given start.
  node -e '
    const m = new WebAssembly.Module(require("fs").readFileSync(process.argv[1]));
    const imports = WebAssembly.Module.imports(m).map((i) => `${i.module}.${i.name}:${i.kind}`);
    if (imports.join() !== "env.memory:memory") { console.error("kernels.wasm imports", imports); process.exit(1); }
    const memory = new WebAssembly.Memory({ initial: 1, maximum: 1 });
    const top = new WebAssembly.Instance(m, { env: { memory } }).exports.stackSave();
    if (top > 8192) { console.error("kernels.wasm: stack top", top); process.exit(1); }
  ' "$out/kernels.wasm"

  record kernels package none
  record kernels version none
  record kernels cflags "${KERNELS_CFLAGS[*]}"
  record kernels link_flags "${KERNELS_LINK_FLAGS[*]}"
  record kernels exports "$exports"
  record kernels output kernels.wasm
  for file in "${KERNELS_ENTRY_POINTS[@]}" codecs/kernels/build.sh; do
    record kernels entry "$file"
  done
}
