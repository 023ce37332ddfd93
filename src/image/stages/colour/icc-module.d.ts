// Wrangler (and the vitest pool) bundle .icc files as binary data (the "Data" rule in wrangler.toml).
declare module '*.icc' {
  const data: ArrayBuffer;
  export default data;
}
