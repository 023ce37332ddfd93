/** The part of autocannon's API the benchmark uses (the package ships no types). */
declare module 'autocannon' {
  interface Histogram {
    average: number;
    max: number;
    p50: number;
    p90: number;
    p99: number;
  }
  interface Result {
    duration: number;
    errors: number;
    timeouts: number;
    latency: Histogram;
    statusCodeStats?: Record<string, { count: number }>;
  }
  function autocannon(options: Record<string, unknown>): Promise<Result>;
  export default autocannon;
}
