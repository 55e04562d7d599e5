import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { load } from './load.js'
import { startRegistry } from './processes.js'
const KEY = `sk_${'p'.repeat(43)}`
const env = JSON.parse(process.argv[2] ?? '{}')
const s = await startRegistry(mkdtempSync(join(tmpdir(), 'ab-')), KEY, env)
const h = { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' }
const api = (await (await fetch(`${s.url}/v1/apis`, { method: 'POST', headers: h, body: JSON.stringify({ name: 'p' }) })).json() as any).data
await fetch(`${s.url}/v1/apis/${api.id}/spec`, { method: 'POST', headers: h, body: JSON.stringify({ document: { openapi: '3.1.0', info: { title: 't', version: '1' }, paths: {} } }) })
const path = process.argv[3] ?? `/v1/apis/${api.id}`
await load(`${s.url}${path}`, { headers: { authorization: h.authorization }, seconds: 2 })
const rs = []
for (let i = 0; i < 3; i++) rs.push((await load(`${s.url}${path}`, { headers: { authorization: h.authorization }, seconds: 3 })).rps)
console.log(JSON.stringify(env), path, rs.map(Math.round).join(' '))
await s.stop()
