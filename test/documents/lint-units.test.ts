/**
 * The re-lint's route keys (src/documents/lint-units.ts): a unit's key must change exactly when the
 * unit or anything its `$ref`s reach, transitively, changes (or appears, or goes), since a memo's
 * findings are reused by key. Checked on seeded documents whose schemas refer to each other in chains
 * and cycles, each edited many ways, against the definition itself: each unit's closure listed whole.
 */
import t from 'tap'
import { documentUnits, routeKeys, type DocumentUnits } from '../../src/documents/lint-units.js'

type Json = Record<string, unknown>

function random(seed: number): () => number {
  let state = seed
  return () => {
    state = (state * 1103515245 + 12345) % 2147483648
    return state / 2147483648
  }
}

/** A 3.1 document of `count` schemas referring to others at random (cycles included) and path items referring to schemas. */
function documentOf(next: () => number, count: number): Json {
  const pick = () => `S${Math.floor(next() * count)}`
  const schemas: Record<string, Json> = {}
  for (let i = 0; i < count; i++) {
    const properties: Record<string, Json> = { name: { type: 'string' } }
    const refs = Math.floor(next() * 3)
    for (let r = 0; r < refs; r++) properties[`p${r}`] = { $ref: `#/components/schemas/${pick()}` }
    schemas[`S${i}`] = { type: 'object', description: `schema ${i}`, properties }
  }
  const paths: Record<string, Json> = {}
  for (let i = 0; i < count / 2; i++) {
    paths[`/things${i}`] = { get: { responses: { '200': { description: 'ok', content: { 'application/json': { schema: { $ref: `#/components/schemas/${pick()}` } } } } } } }
  }
  return { openapi: '3.1.0', info: { title: 'Keys', version: '1' }, paths, components: { schemas } }
}

/** One edit: a schema's text changed, a reference added or removed, a schema removed (its references dangle) or added. */
function edited(document: Json, next: () => number, count: number): Json {
  const copy = JSON.parse(JSON.stringify(document)) as { components: { schemas: Record<string, Json & { properties: Record<string, Json> }> } }
  const schemas = copy.components.schemas
  const names = Object.keys(schemas)
  const name = names[Math.floor(next() * names.length)]
  const kind = Math.floor(next() * 5)
  if (kind === 0) schemas[name].description = `changed ${next()}`
  else if (kind === 1) schemas[name].properties.extra = { $ref: `#/components/schemas/S${Math.floor(next() * count)}` }
  else if (kind === 2) schemas[name].properties = { name: { type: 'string' } }
  else if (kind === 3) delete schemas[name]
  else schemas[`S${count + Math.floor(next() * 3)}`] = { type: 'object', properties: { name: { type: 'string' } } }
  return copy as unknown as Json
}

/** The cut of a document; undefined when it is refused (a missing target referred to twice, after a removal). */
function cut(document: Json): DocumentUnits | undefined {
  const text = JSON.stringify(document)
  const units = documentUnits(JSON.parse(text), text)
  return 'refused' in units ? undefined : units
}

/** What a unit's findings depend on, listed whole: every unit it reaches, with its JSON, or its absence. */
function closureText(units: DocumentUnits, id: string): string {
  const seen = new Set<string>()
  const stack = [id]
  while (stack.length > 0) {
    const next = stack.pop()!
    if (seen.has(next)) continue
    seen.add(next)
    stack.push(...(units.units.get(next)?.reaches ?? []))
  }
  return [...seen].sort().map((reached) => `${reached}=${JSON.stringify(units.units.get(reached)?.value ?? null)}`).join('\n')
}

t.test("a unit's route key changes exactly when something it reaches changes", async (t) => {
  let compared = 0
  let changed = 0
  let mismatches = 0
  for (let seed = 1; seed <= 40; seed++) {
    const fresh = () => {
      const next = random(seed)
      const count = 5 + Math.floor(next() * 25)
      return { next, count, document: documentOf(next, count) }
    }
    const { next, count, document: original } = fresh()
    const before = cut(original)!
    const keysBefore = routeKeys(before)
    t.same([...routeKeys(cut(fresh().document)!)], [...keysBefore], `seed ${seed}: the same document has the same keys`)
    t.equal(new Set(keysBefore.values()).size, keysBefore.size, `seed ${seed}: no two units share a key, units of one cycle included`)
    let document = original
    for (let edit = 0; edit < 6; edit++) {
      const candidate = edited(document, next, count)
      const after = cut(candidate)
      if (!after) continue
      document = candidate
      const keysAfter = routeKeys(after)
      for (const [id, key] of keysAfter) {
        if (!keysBefore.has(id)) continue
        compared += 1
        const keyChanged = key !== keysBefore.get(id)
        const closureChanged = closureText(after, id) !== closureText(before, id)
        if (closureChanged) changed += 1
        if (keyChanged !== closureChanged) mismatches += 1
      }
    }
  }
  t.equal(mismatches, 0, `of ${compared} units compared across edits, every key changed exactly when its closure did`)
  t.ok(changed > compared / 10 && changed < compared, `the edits changed some closures and left others (${changed} of ${compared})`)
})
