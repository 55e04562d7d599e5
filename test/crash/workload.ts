/**
 * The writes a crash run streams: clients that create, upload (new and unchanged documents, JSON and
 * YAML), restore, update and delete APIs, schemas and rulesets, and record in the ledger every answer
 * they get. A client stops at the first request that gets no answer: the server was killed.
 */
import { stringify } from 'yaml'
import { Ledger, type Kind, type Tracked } from './ledger.js'
import { seededRandom } from '../../bench/generate.js'

export interface Target {
  url: string
  key: string
}

/** A seeded random source, so that a failing run can be repeated. */
export { seededRandom }

interface Answer {
  status: number
  body: any
  text: string
}

/** Thrown when a request got no answer (the connection failed): the server is gone. */
class NoAnswer extends Error {}

interface Client {
  target: Target
  ledger: Ledger
  random: () => number
  next: () => number
}

async function send(client: Client, method: string, path: string, payload?: unknown, yaml = false): Promise<Answer> {
  const headers: Record<string, string> = { authorization: `Bearer ${client.target.key}` }
  let body: string | undefined
  if (payload !== undefined) {
    headers['content-type'] = yaml ? 'application/yaml' : 'application/json'
    body = yaml ? stringify(payload) : JSON.stringify(payload)
  }
  let response: Response
  let text: string
  try {
    response = await fetch(`${client.target.url}${path}`, { method, headers, body, signal: AbortSignal.timeout(60_000) })
    text = await response.text()
  } catch {
    client.ledger.unanswered += 1
    throw new NoAnswer()
  }
  let parsed: unknown
  try {
    parsed = text ? JSON.parse(text) : undefined
  } catch {
    parsed = undefined
  }
  return { status: response.status, body: parsed, text }
}

/** Records an answer: acknowledged (one of `ok`), an expected refusal (one of `refused`), or a failure. */
function expect(client: Client, what: string, answer: Answer, ok: number[], refused: number[] = []): boolean {
  if (ok.includes(answer.status)) {
    client.ledger.writes += 1
    return true
  }
  if (!refused.includes(answer.status)) client.ledger.unexpected.push(`${what}: ${answer.status} ${answer.text.slice(0, 300)}`)
  return false
}

const pick = <T>(client: Client, items: T[]): T | undefined => items[Math.floor(client.random() * items.length)]

const DOCUMENT_PATH: Record<Kind, string> = { apis: 'spec', schemas: 'document', rulesets: 'document' }

export function documentFor(kind: Kind, n: number): Record<string, unknown> {
  switch (kind) {
    case 'apis':
      return {
        openapi: '3.1.0',
        info: { title: `API ${n}`, version: `1.0.${n}`, description: n % 3 === 0 ? '' : 'An API.' },
        paths: {
          [`/things${n % 7}`]: {
            get: {
              operationId: `listThings${n}`, summary: 'List things',
              responses: { '200': { description: 'ok', content: { 'application/json': { schema: { $ref: '#/components/schemas/Thing' } } } } },
            },
          },
        },
        components: { schemas: { Thing: { type: 'object', properties: { id: { type: 'integer' }, n: { const: n } } } } },
      }
    case 'schemas':
      return { $schema: 'https://json-schema.org/draft/2020-12/schema', title: `schema ${n}`, type: 'object', properties: { n: { const: n } } }
    case 'rulesets':
      return {
        extends: [['spectral:oas', 'recommended']],
        rules: { [`house-${n % 5}`]: { given: '$.info', severity: 'warn', then: { field: 'description', function: 'truthy' } } },
      }
  }
}

function ackVersion(client: Client, tracked: Tracked, data: { id: string; number: number; checksum: string }, document?: unknown) {
  client.ledger.ackVersion(tracked, { id: data.id, number: data.number, checksum: data.checksum })
  if (document !== undefined) tracked.lastDocument = document
}

async function create(client: Client, kind: Kind): Promise<void> {
  const n = client.next()
  const payload: Record<string, unknown> = { name: `${kind} ${n}`, visibility: client.random() < 0.3 ? 'public' : 'private' }
  const ruleset = kind === 'apis' && client.random() < 0.4 ? pick(client, client.ledger.live('rulesets')) : undefined
  if (ruleset) Object.assign(payload, { ruleset_id: ruleset.id, blocking_severity: 'off' })
  const document = kind === 'apis' || (kind === 'rulesets' && client.random() < 0.3) ? undefined : documentFor(kind, n)
  if (document) payload.document = document
  const answer = await send(client, 'POST', `/v1/${kind}`, payload)
  // 422: the ruleset named was deleted meanwhile.
  if (!expect(client, `create ${kind}`, answer, [201], ruleset ? [422] : [])) return
  const tracked = client.ledger.track(kind, answer.body.data.id)
  tracked.history.push(`${client.ledger.round} create ${answer.status}`)
  if (answer.body.data.current) ackVersion(client, tracked, answer.body.data.current, document)
}

async function upload(client: Client, kind: Kind, unchanged: boolean): Promise<void> {
  const candidates = client.ledger.live(kind).filter((r) => !unchanged || r.lastDocument !== undefined)
  const tracked = pick(client, candidates)
  if (!tracked) return create(client, kind)
  const document = unchanged ? tracked.lastDocument : documentFor(kind, client.next())
  const answer = await send(client, 'POST', `/v1/${kind}/${tracked.id}/${DOCUMENT_PATH[kind]}`, { document })
  // 404: deleted meanwhile; 409: the lint gate kept changing under the upload.
  if (expect(client, `upload ${kind}`, answer, [200, 201], [404, 409])) ackVersion(client, tracked, answer.body.data, document)
}

async function uploadYaml(client: Client, kind: Kind): Promise<void> {
  const tracked = pick(client, client.ledger.live(kind))
  if (!tracked) return create(client, kind)
  const document = documentFor(kind, client.next())
  const answer = await send(client, 'POST', `/v1/${kind}/${tracked.id}/${DOCUMENT_PATH[kind]}`, document, true)
  if (expect(client, `upload ${kind} as YAML`, answer, [200, 201], [404, 409])) ackVersion(client, tracked, answer.body.data, document)
}

async function restore(client: Client): Promise<void> {
  const tracked = pick(client, client.ledger.live().filter((r) => r.versions.size > 0))
  if (!tracked) return
  const version = pick(client, [...tracked.versions.values()])!
  const answer = await send(client, 'POST', `/v1/${tracked.kind}/${tracked.id}/versions/${version.id}/restore`)
  if (expect(client, `restore ${tracked.kind}`, answer, [200, 201], [404])) ackVersion(client, tracked, answer.body.data)
}

async function update(client: Client): Promise<void> {
  const tracked = pick(client, client.ledger.live())
  if (!tracked) return
  const payload = { name: `renamed ${client.next()}`, visibility: client.random() < 0.5 ? 'public' : 'private' }
  const answer = await send(client, 'PATCH', `/v1/${tracked.kind}/${tracked.id}`, payload)
  tracked.history.push(`${client.ledger.round} update ${answer.status}`)
  expect(client, `update ${tracked.kind}`, answer, [200], [404])
}

async function remove(client: Client): Promise<void> {
  const tracked = pick(client, client.ledger.live())
  if (!tracked) return
  try {
    const answer = await send(client, 'DELETE', `/v1/${tracked.kind}/${tracked.id}`)
    tracked.history.push(`${client.ledger.round} delete ${answer.status}`)
    // 409: a ruleset that APIs still use. 404: deleted by someone else (perhaps unanswered).
    if (expect(client, `delete ${tracked.kind}`, answer, [204], [404, 409]) || answer.status === 404) tracked.deleted = 'acked'
  } catch (error) {
    tracked.history.push(`${client.ledger.round} delete unanswered`)
    tracked.deleted ??= 'maybe'
    throw error
  }
}

const OPERATIONS: [number, (client: Client) => Promise<void>][] = [
  [5, (c) => create(c, 'apis')], [3, (c) => create(c, 'schemas')], [2, (c) => create(c, 'rulesets')],
  [24, (c) => upload(c, 'apis', false)], [6, (c) => uploadYaml(c, 'apis')],
  [6, (c) => upload(c, 'schemas', false)], [3, (c) => upload(c, 'rulesets', false)],
  [6, (c) => upload(c, 'apis', true)], [3, (c) => upload(c, 'schemas', true)],
  [8, restore], [4, update], [3, remove],
]
const TOTAL_WEIGHT = OPERATIONS.reduce((sum, [weight]) => sum + weight, 0)

/** One client: random writes until it is told to stop or the server stops answering. */
export async function runClient(target: Target, ledger: Ledger, random: () => number, next: () => number, stop: { stopped: boolean }): Promise<void> {
  const client: Client = { target, ledger, random, next }
  while (!stop.stopped) {
    let roll = random() * TOTAL_WEIGHT
    const operation = OPERATIONS.find(([weight]) => (roll -= weight) < 0)![1]
    try {
      await operation(client)
    } catch (error) {
      if (error instanceof NoAnswer) return
      throw error
    }
  }
}
