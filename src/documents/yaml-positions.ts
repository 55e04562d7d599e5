/**
 * Offsets of paths in a YAML text (positions.ts says which offset a path gets). The text is read with
 * the options that decide its keys in the registry's own parse (parse.ts: YAML 1.2, every key a
 * string, merge keys), so a path's keys are the text's keys.
 */
import { isMap, isPair, isScalar, isSeq, parseDocument, type Node, type Pair, type YAMLMap } from 'yaml'
import type { DocumentPath } from './positions.js'

/** A mapping's pairs by key, made once per mapping a path goes through; the last of duplicate keys wins, as in JSON. */
function pairsOf(map: YAMLMap, index: WeakMap<YAMLMap, Map<string, Pair>>): Map<string, Pair> {
  let pairs = index.get(map)
  if (!pairs) {
    pairs = new Map()
    for (const item of map.items) if (isPair(item) && isScalar(item.key)) pairs.set(String(item.key.value), item)
    index.set(map, pairs)
  }
  return pairs
}

export function yamlOffsets(text: string, paths: readonly DocumentPath[]): number[] {
  const document = parseDocument(text, { version: '1.2', schema: 'core', stringKeys: true, merge: true, uniqueKeys: false, strict: false, keepSourceTokens: false })
  const root = document.contents as Node | null
  const index = new WeakMap<YAMLMap, Map<string, Pair>>()
  return paths.map((path) => {
    let node: Node | null = root
    let offset = node?.range?.[0] ?? 0
    for (const segment of path) {
      if (isMap(node)) {
        const pair = pairsOf(node, index).get(String(segment))
        if (!pair) break
        offset = (pair.key as Node).range?.[0] ?? offset
        node = pair.value as Node | null
      } else if (isSeq(node)) {
        const item = String(Number(segment)) === String(segment) ? node.items[Number(segment)] as Node | null | undefined : undefined
        if (!item) break
        offset = item.range?.[0] ?? offset
        node = item
      } else break
    }
    return offset
  })
}
