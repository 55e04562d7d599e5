/**
 * The dependency graph of Spectral's `$ref` resolver, sped up (src/documents/dependency-graph-speedup.ts),
 * answers what the library answers: the same edge lists in the same order, the same overall order
 * (with and without `leavesOnly`), the same dependants and dependencies, on seeded random graphs with
 * repeated edges, cycles and removals; and Spectral's resolver resolves a generated document to the
 * same result and graph with the speed-up and without it.
 */
import t from 'tap'
import { generateOpenApi, seededRandom } from '../../bench/generate.js'
import { installDependencyGraphSpeedup, resolverDependencyGraph, useDependencyGraphSpeedup } from '../../src/documents/dependency-graph-speedup.js'
import { spectral } from '../../src/documents/spectral.js'

interface Graph {
  outgoingEdges: Record<string, string[]>
  incomingEdges: Record<string, string[]>
  addNode(node: string): void
  addDependency(from: string, to: string): boolean
  removeNode(node: string): void
  removeDependency(from: string, to: string): void
  overallOrder(leavesOnly?: boolean): string[]
  dependantsOf(node: string): string[]
  dependenciesOf(node: string): string[]
}
type GraphClass = { new (options: { circular: boolean }): Graph; prototype: Graph }

// The library's own methods, taken before the speed-up replaces them.
const { DepGraph } = resolverDependencyGraph() as { DepGraph: GraphClass }
const library = { ...DepGraph.prototype }
const { addDependency, overallOrder, removeNode, removeDependency } = DepGraph.prototype
installDependencyGraphSpeedup()

t.ok(DepGraph.prototype.addDependency !== addDependency && DepGraph.prototype.overallOrder !== overallOrder, 'the resolver\'s copy is the one sped up')

/** The same seeded operations on two graphs: one through the library's methods, one through the sped-up ones. */
function twoGraphs(seed: number, nodes: number, edges: number): [Graph, Graph] {
  const random = seededRandom(seed)
  const pick = () => `#/n${Math.floor(random() * nodes)}`
  const mine = new DepGraph({ circular: true })
  const theirs = new DepGraph({ circular: true })
  for (let i = 0; i < nodes; i++) {
    mine.addNode(`#/n${i}`)
    theirs.addNode(`#/n${i}`)
  }
  for (let i = 0; i < edges; i++) {
    const from = pick()
    const to = random() < 0.3 ? '#/n0' : pick() // a node many depend on, as a shared component
    if (mine.addDependency(from, to) !== addDependency.call(theirs, from, to)) t.fail(`addDependency(${from}, ${to}) answers differently`)
    if (i === Math.floor(edges / 2)) {
      const gone = pick()
      mine.removeNode(gone)
      removeNode.call(theirs, gone)
      mine.addNode(gone)
      theirs.addNode(gone)
      const [a, b] = [pick(), pick()]
      if (a !== gone && b !== gone) {
        mine.removeDependency(a, b)
        removeDependency.call(theirs, a, b)
      }
    }
  }
  return [mine, theirs]
}

t.test('edge lists, orders, dependants and dependencies are the library\'s', async (t) => {
  for (const [seed, nodes, edges] of [[1, 10, 40], [2, 200, 1500], [3, 1000, 3000], [4, 50, 5000]]) {
    const [mine, theirs] = twoGraphs(seed, nodes, edges)
    t.same(mine.outgoingEdges, theirs.outgoingEdges, `seed ${seed}: outgoing edges`)
    t.same(mine.incomingEdges, theirs.incomingEdges, `seed ${seed}: incoming edges`)
    t.same(mine.overallOrder(), overallOrder.call(theirs), `seed ${seed}: overall order`)
    t.same(mine.overallOrder(true), overallOrder.call(theirs, true), `seed ${seed}: overall order, leaves only`)
    for (const node of ['#/n0', '#/n1', `#/n${nodes - 1}`]) {
      t.same(mine.dependantsOf(node), library.dependantsOf.call(theirs, node), `seed ${seed}: dependants of ${node}`)
      t.same(mine.dependenciesOf(node), library.dependenciesOf.call(theirs, node), `seed ${seed}: dependencies of ${node}`)
    }
  }
})

t.test('an acyclic graph (not the resolver\'s kind) keeps the library\'s order and its cycle error', async (t) => {
  const graph = new DepGraph({ circular: false })
  for (const node of ['a', 'b', 'c']) graph.addNode(node)
  graph.addDependency('a', 'b')
  graph.addDependency('b', 'c')
  t.same(graph.overallOrder(), ['c', 'b', 'a'])
  graph.addDependency('c', 'a')
  t.throws(() => graph.overallOrder(), { message: /Dependency Cycle Found: a -> b -> c -> a/, cyclePath: ['a', 'b', 'c', 'a'] })
})

t.test('Spectral\'s resolver resolves a document to the same result and graph with and without it', async (t) => {
  const { refResolver } = spectral()
  const document = generateOpenApi(60_000, 7)
  const resolved: string[] = []
  for (const on of [true, false]) {
    useDependencyGraphSpeedup(on)
    const result = await new refResolver.Resolver({ resolvers: {} }).resolve(structuredClone(document))
    resolved.push(JSON.stringify([result.result, result.refMap, result.errors, result.graph.overallOrder()]))
  }
  useDependencyGraphSpeedup(true)
  t.equal(resolved[0], resolved[1])
  t.ok(resolved[0].length > JSON.stringify(document).length, 'references were resolved (the result is larger than the document)')
})
