import t from 'tap'
import { Registry } from 'prom-client'
import { RequestStats } from '../../src/metrics/request-stats.js'

async function scrape(stats: RequestStats): Promise<string> {
  const registry = new Registry()
  registry.registerMetric(stats.counter('requests_total', 'responses'))
  registry.registerMetric(stats.histogram('request_seconds', 'durations'))
  return registry.metrics()
}

t.test('counts by status and cumulative buckets, an observation on a bound counting in that bucket', async (t) => {
  const stats = new RequestStats([0.01, 0.1])
  const record = stats.recorder('GET', '/v1/apis/:api')
  record(200, 0.005)
  record(200, 0.01)
  record(404, 0.05)
  record(200, 3)
  const text = await scrape(stats)
  t.match(text, 'requests_total{method="GET",route="/v1/apis/:api",status="200"} 3\n')
  t.match(text, 'requests_total{method="GET",route="/v1/apis/:api",status="404"} 1\n')
  t.match(text, 'request_seconds_bucket{le="0.01",method="GET",route="/v1/apis/:api"} 2\n')
  t.match(text, 'request_seconds_bucket{le="0.1",method="GET",route="/v1/apis/:api"} 3\n')
  t.match(text, 'request_seconds_bucket{le="+Inf",method="GET",route="/v1/apis/:api"} 4\n')
  t.match(text, 'request_seconds_sum{method="GET",route="/v1/apis/:api"} 3.065\n')
  t.match(text, 'request_seconds_count{method="GET",route="/v1/apis/:api"} 4')
  t.match(text, '# TYPE request_seconds histogram')
})

t.test('a route asked for twice shares one series; routes without responses show no samples', async (t) => {
  const stats = new RequestStats([1])
  stats.recorder('GET', '/a')(200, 0.5)
  stats.recorder('GET', '/a')(200, 0.5)
  stats.recorder('POST', '/a')
  const text = await scrape(stats)
  t.match(text, 'requests_total{method="GET",route="/a",status="200"} 2\n')
  t.notMatch(text, 'method="POST"')
})

t.test('a registry reset zeroes every series', async (t) => {
  const stats = new RequestStats([1])
  const registry = new Registry()
  registry.registerMetric(stats.counter('requests_total', 'responses'))
  stats.recorder('GET', '/a')(200, 0.5)
  registry.resetMetrics()
  t.notMatch(await registry.metrics(), 'route="/a"')
})
