/**
 * Two quadratic loops of `dependency-graph` 0.11 (the graph Spectral's `$ref` resolver,
 * @stoplight/json-ref-resolver, builds for every lint), made linear without changing what they answer
 * (issue 19 item 4; docs/lint.md, "Profile of the 5 MB lint"):
 * - `addDependency` looks an edge up in the node's edge list (`indexOf`) before adding it: a component
 *   that thousands of operations refer to has thousands of incoming edges, so adding them is quadratic
 *   (8.4 s of a 45 s lint of the 5 MB document). The same check is made here with a Set kept beside
 *   each list; the lists themselves, their order and every other method are untouched.
 * - `overallOrder` of a graph that tolerates cycles (the resolver's are built so) looks every node up
 *   in the result so far (`indexOf`) to find those the first pass left out (2.5 s). The same filter is
 *   made with a Set of that result; the nodes and their order are the same.
 * The resolver's graphs are only ever added to; a removal through the library's own methods drops the
 * Sets of the lists it may have changed, so a later lookup builds them again from the lists.
 */
import { createRequire } from 'node:module'

interface Graph {
  nodes: Record<string, unknown>
  outgoingEdges: Record<string, string[]>
  incomingEdges: Record<string, string[]>
  circular: boolean
  hasNode(node: string): boolean
}
interface DepGraphPrototype extends Graph {
  addDependency(from: string, to: string): boolean
  removeNode(node: string): void
  removeDependency(from: string, to: string): void
  overallOrder(leavesOnly?: boolean): string[]
}

const require = createRequire(import.meta.url)
/** Membership of each edge list, built on first lookup. */
const members = new WeakMap<string[], Set<string>>()
let installed = false
let enabled = true

/** Turns the speed-up off and on, before a thread's first lint (the lint differential's plain Spectral runs without it). */
export function useDependencyGraphSpeedup(on: boolean): void {
  enabled = on
}

function membersOf(list: string[]): Set<string> {
  let set = members.get(list)
  if (!set) {
    set = new Set(list)
    members.set(list, set)
  }
  return set
}

function addOnce(list: string[], item: string): void {
  const set = membersOf(list)
  if (set.has(item)) return
  set.add(item)
  list.push(item)
}

function forgetLists(graph: Graph): void {
  for (const lists of [graph.outgoingEdges, graph.incomingEdges]) for (const list of Object.values(lists)) members.delete(list)
}

/** The `dependency-graph` module that Spectral's resolver (spectral-ref-resolver → json-ref-resolver) loads. */
export function resolverDependencyGraph(): unknown {
  const spectralResolverRequire = createRequire(require.resolve('@stoplight/spectral-ref-resolver'))
  const resolverRequire = createRequire(spectralResolverRequire.resolve('@stoplight/json-ref-resolver'))
  return resolverRequire('dependency-graph')
}

/**
 * Patches the copy of `dependency-graph` that the `$ref` resolver loads (the one its own `require`
 * finds); call before Spectral lints.
 */
export function installDependencyGraphSpeedup(): void {
  if (installed) return
  installed = true
  const { DepGraph } = resolverDependencyGraph() as { DepGraph: { prototype: DepGraphPrototype } }
  const prototype = DepGraph.prototype
  const { addDependency, overallOrder, removeNode, removeDependency } = prototype

  // As the library's, with the two `indexOf` checks made on Sets.
  prototype.addDependency = function (this: DepGraphPrototype, from: string, to: string): boolean {
    if (!enabled) return addDependency.call(this, from, to)
    if (!this.hasNode(from)) throw new Error('Node does not exist: ' + from)
    if (!this.hasNode(to)) throw new Error('Node does not exist: ' + to)
    addOnce(this.outgoingEdges[from], to)
    addOnce(this.incomingEdges[to], from)
    return true
  }
  prototype.removeNode = function (this: Graph, node: string): void {
    removeNode.call(this, node)
    forgetLists(this)
  }
  prototype.removeDependency = function (this: Graph, from: string, to: string): void {
    removeDependency.call(this, from, to)
    forgetLists(this)
  }
  prototype.overallOrder = function (this: DepGraphPrototype, leavesOnly?: boolean): string[] {
    if (!enabled || !this.circular) return overallOrder.call(this, leavesOnly)
    return circularOrder(this, leavesOnly === true)
  }
}

/**
 * `overallOrder` of a graph that tolerates cycles, as the library computes it (a depth-first search
 * from every node nothing depends on, then from every node left out, in key order), with the
 * left-out nodes found through a Set.
 */
function circularOrder(graph: Graph, leavesOnly: boolean): string[] {
  const result: string[] = []
  const keys = Object.keys(graph.nodes)
  if (keys.length === 0) return result
  const dfs = depthFirst(graph.outgoingEdges, leavesOnly, result)
  keys.filter((node) => graph.incomingEdges[node].length === 0).forEach((node) => dfs(node))
  const reached = new Set(result)
  keys.filter((node) => !reached.has(node)).forEach((node) => dfs(node))
  return result
}

/** The library's `createDFS` for a graph that tolerates cycles (a node on the current path is skipped). */
function depthFirst(edges: Record<string, string[]>, leavesOnly: boolean, result: string[]): (start: string) => void {
  const visited: Record<string, boolean> = {}
  return (start) => {
    if (visited[start]) return
    const inCurrentPath: Record<string, boolean> = {}
    const todo: { node: string; processed: boolean }[] = [{ node: start, processed: false }]
    while (todo.length > 0) {
      const current = todo[todo.length - 1]
      const node = current.node
      if (!current.processed) {
        if (visited[node] || inCurrentPath[node]) {
          todo.pop()
          continue
        }
        inCurrentPath[node] = true
        const nodeEdges = edges[node]
        for (let i = nodeEdges.length - 1; i >= 0; i--) todo.push({ node: nodeEdges[i], processed: false })
        current.processed = true
      } else {
        todo.pop()
        inCurrentPath[node] = false
        visited[node] = true
        if (!leavesOnly || edges[node].length === 0) result.push(node)
      }
    }
  }
}
