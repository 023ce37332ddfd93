# Sourced by codecs/build.sh: the perceptual metric quality=auto scores with (no upstream library),
# as src/image/codecs/wasm/metric.wasm: SSIMULACRA 2.1 a row at a time (codecs/metric/ssimulacra2.c),
# computing what src/image/quality/ssimulacra2.ts computes. A standalone module without Emscripten's
# JavaScript: it imports its memory, which src/image/quality/ssimulacra2-kernels.ts sizes, and lays
# out its buffers itself from the address it is given.

METRIC_CFLAGS=(-O3 -msimd128 -DNDEBUG)
METRIC_LINK_FLAGS=(--no-entry -sSTANDALONE_WASM=1 -sIMPORTED_MEMORY=1 -sINITIAL_MEMORY=64KB -sTOTAL_STACK=8KB -sALLOW_MEMORY_GROWTH=1)
METRIC_ENTRY_POINTS=(codecs/metric/ssimulacra2.c)
METRIC_EXPORTS=(_ssim2_bytes _ssim2_init _ssim2_row _ssim2_sums _ssim2_scales _ssim2_push _ssim2_finish)

build_metric() {
  local exports
  exports=$(IFS=,; echo "${METRIC_EXPORTS[*]}")
  emcc "${METRIC_CFLAGS[@]}" "$here/metric/ssimulacra2.c" "${METRIC_LINK_FLAGS[@]}" -sEXPORTED_FUNCTIONS="$exports" -o "$out/metric.wasm"
  # What ssimulacra2-kernels.ts relies on: the memory is the one import, and the module's static
  # data and stack end below 32 KiB, where the buffers it lays out start.
  node -e '
    const m = new WebAssembly.Module(require("fs").readFileSync(process.argv[1]));
    const imports = WebAssembly.Module.imports(m).map((i) => `${i.module}.${i.name}:${i.kind}`);
    if (imports.join() !== "env.memory:memory") { console.error("metric.wasm imports", imports); process.exit(1); }
    const memory = new WebAssembly.Memory({ initial: 1, maximum: 1 });
    const top = new WebAssembly.Instance(m, { env: { memory } }).exports.stackSave();
    if (top > 32768) { console.error("metric.wasm: stack top", top); process.exit(1); }
  ' "$out/metric.wasm"

  record metric package none
  record metric version none
  record metric cflags "${METRIC_CFLAGS[*]}"
  record metric link_flags "${METRIC_LINK_FLAGS[*]}"
  record metric exports "$exports"
  record metric output metric.wasm
  for file in "${METRIC_ENTRY_POINTS[@]}" codecs/metric/build.sh; do
    record metric entry "$file"
  done
}
