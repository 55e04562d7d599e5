/**
 * The diff of two JSON Schemas, in Confluent Schema Registry's terms: a change is breaking when data
 * written with the old schema may be invalid under the new one (the new schema reads old data:
 * backward compatibility). Forward compatibility is the same diff with the two swapped.
 */
import { CHECKS, classify } from './checks.js'
import { child, isObject, JsonDocument, type Loc } from './json.js'
import { DiffBuilder } from './result.js'
import { SchemaGraph, keywordsOf } from './schema-graph.js'
import type { DiffResult } from './types.js'

/** Keywords that hold definitions other parts of the schema refer to. */
const DEFINITIONS = ['$defs', 'definitions']

export function diffJsonSchema(before: unknown, after: unknown): DiffResult {
  const bDocument = new JsonDocument(before)
  const aDocument = new JsonDocument(after)
  const graph = new SchemaGraph(bDocument, aDocument)
  const result = new DiffBuilder()
  const root = graph.node('request', bDocument.rootLoc, aDocument.rootLoc, '')
  SchemaGraph.collect(root, graph.changedClosures([root]), new Set(), (change) => result.atDocument(change))
  // Definitions the schema never refers to do not change what is valid.
  for (const keyword of DEFINITIONS) {
    const bDefinitions = child(bDocument.rootLoc, keyword)
    const aDefinitions = child(aDocument.rootLoc, keyword)
    const b = isObject(bDefinitions.node) ? bDefinitions.node : {}
    const a = isObject(aDefinitions.node) ? aDefinitions.node : {}
    for (const name of keywordsOf(b, a)) {
      const bLoc: Loc = child(bDefinitions, name)
      const aLoc: Loc = child(aDefinitions, name)
      if (graph.reaches(bLoc.ptr, aLoc.ptr)) continue
      if (bLoc.node === undefined || aLoc.node === undefined) {
        const check = bLoc.node === undefined ? CHECKS.componentAdded : CHECKS.componentRemoved
        const kind = bLoc.node === undefined ? 'added' : 'removed'
        result.atDocument({ kind, pointer: kind === 'added' ? aLoc.ptr : bLoc.ptr, check: check.id, classification: classify(check, 'unused'),
          message: `the unused definition ${keyword}/${name} was ${kind}` })
        continue
      }
      const node = graph.node('unused', bLoc, aLoc, '')
      SchemaGraph.collect(node, graph.changedClosures([node]), new Set(), (change) => result.atDocument(change))
    }
  }
  return result.build()
}
