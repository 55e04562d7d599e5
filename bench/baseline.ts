/**
 * The baseline: plain Fastify, no registry. `/bytes` answers the registry's 500 KB document from
 * memory, `/object` answers a JSON object the size of `GET /v1/apis/{api}`, serialized per request.
 */
import { readFileSync } from 'node:fs'
import Fastify from 'fastify'

const bytes = readFileSync(process.env.BENCH_BYTES_FILE!)
const object = JSON.parse(readFileSync(process.env.BENCH_OBJECT_FILE!, 'utf8'))
const app = Fastify({ logger: false })
app.get('/bytes', async (_request, reply) => reply.type('application/json; charset=utf-8').send(bytes))
app.get('/object', async () => object)
const address = await app.listen({ port: 0, host: '127.0.0.1' })
process.stdout.write(`baseline listening on ${address}\n`)
