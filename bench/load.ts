import autocannon from 'autocannon'

export interface LoadResult {
  rps: number
  /** Mean latency in ms (autocannon's percentiles are whole milliseconds). */
  mean: number
  p50: number
  p99: number
  errors: number
  non2xx: number
}

export interface LoadOptions {
  headers?: Record<string, string>
  seconds: number
  connections?: number
  /** Requests per second in total: a fixed rate measures latency instead of saturation. */
  rate?: number
}

export async function load(url: string, options: LoadOptions): Promise<LoadResult> {
  const result = await autocannon({
    url, headers: options.headers, duration: options.seconds, connections: options.connections ?? 10,
    overallRate: options.rate,
  })
  return {
    rps: result.requests.average,
    mean: result.latency.average,
    p50: result.latency.p50,
    p99: result.latency.p99,
    errors: result.errors + result.timeouts,
    non2xx: result.non2xx,
  }
}

export const median = (values: number[]): number => {
  const sorted = [...values].sort((a, b) => a - b)
  const mid = Math.floor(sorted.length / 2)
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2
}

/** Alternates the two sides so that drift in the machine hits both alike; answers medians. */
export async function compareThroughput(registry: () => Promise<LoadResult>, baseline: () => Promise<LoadResult>, rounds = 3) {
  const r: LoadResult[] = []
  const b: LoadResult[] = []
  for (let i = 0; i < rounds; i++) {
    r.push(await registry())
    b.push(await baseline())
  }
  const bad = r.reduce((n, x) => n + x.errors + x.non2xx, 0)
  if (bad > 0) throw new Error(`the registry answered ${bad} errors or non-2xx under load`)
  return {
    registry: median(r.map((x) => x.rps)), baseline: median(b.map((x) => x.rps)),
    /** Each round's figures, for judging how steady the machine was. */
    rounds: `registry ${r.map((x) => Math.round(x.rps)).join(' / ')}; baseline ${b.map((x) => Math.round(x.rps)).join(' / ')}`,
  }
}
