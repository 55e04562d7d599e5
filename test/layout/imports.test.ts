/**
 * The layout's rules (issue 16, item 5; the developers' guide): no import circles among the modules
 * that load each other at run time, and layers that call downward only. Read from the sources with
 * the TypeScript parser the project already compiles with: type-only imports vanish at run time, so
 * they may go both ways, and a lazy `import()` is not followed.
 */
import { readdirSync, readFileSync } from 'node:fs'
import { dirname, join, relative, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import t from 'tap'
import ts from 'typescript'

const src = fileURLToPath(new URL('../../src/', import.meta.url))

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name)
    if (entry.isDirectory()) return sourceFiles(path)
    return /\.ts$/.test(entry.name) && !entry.name.endsWith('.d.ts') ? [path] : []
  })
}

/** What a module loads when it loads: its value imports and re-exports (packages by name, files by path). */
function runtimeImports(file: string): string[] {
  const source = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.Latest, false)
  const specifiers: string[] = []
  for (const statement of source.statements) {
    if (ts.isImportDeclaration(statement)) {
      const clause = statement.importClause
      if (clause?.isTypeOnly) continue
      const named = clause?.namedBindings
      const onlyTypes = clause !== undefined && clause.name === undefined && named !== undefined &&
        ts.isNamedImports(named) && named.elements.length > 0 && named.elements.every((element) => element.isTypeOnly)
      if (!onlyTypes) specifiers.push((statement.moduleSpecifier as ts.StringLiteral).text)
    } else if (ts.isExportDeclaration(statement) && statement.moduleSpecifier && !statement.isTypeOnly) {
      const named = statement.exportClause
      if (named && ts.isNamedExports(named) && named.elements.length > 0 && named.elements.every((element) => element.isTypeOnly)) continue
      specifiers.push((statement.moduleSpecifier as ts.StringLiteral).text)
    }
  }
  return specifiers.map((specifier) => (specifier.startsWith('.') ? resolve(dirname(file), specifier).replace(/\.js$/, '.ts') : specifier))
}

const files = sourceFiles(src)
const graph = new Map(files.map((file) => [file, runtimeImports(file)]))
const name = (file: string) => relative(src, file)

t.test('no module of src loads itself again through its imports', async (t) => {
  // Tarjan's strongly connected components: every component of more than one module is a circle.
  let counter = 0
  const index = new Map<string, number>()
  const low = new Map<string, number>()
  const stack: string[] = []
  const onStack = new Set<string>()
  const circles: string[][] = []
  const visit = (file: string) => {
    index.set(file, counter)
    low.set(file, counter++)
    stack.push(file)
    onStack.add(file)
    for (const next of graph.get(file) ?? []) {
      if (!graph.has(next)) continue
      if (!index.has(next)) {
        visit(next)
        low.set(file, Math.min(low.get(file)!, low.get(next)!))
      } else if (onStack.has(next)) {
        low.set(file, Math.min(low.get(file)!, index.get(next)!))
      }
    }
    if (low.get(file) === index.get(file)) {
      const component: string[] = []
      let member: string
      do {
        member = stack.pop()!
        onStack.delete(member)
        component.push(name(member))
      } while (member !== file)
      if (component.length > 1 || (graph.get(file) ?? []).includes(file)) circles.push(component.sort())
    }
  }
  for (const file of files) if (!index.has(file)) visit(file)
  t.ok(files.length > 100, `read ${files.length} modules`)
  t.same(circles, [], 'modules that load each other')
})

/** Which folders of src a layer may not load at run time (layers call downward only). */
const forbidden: Record<string, { folders: string[]; packages: string[] }> = {
  domain: { folders: ['http', 'cli'], packages: ['fastify', 'lmdb', 'pg'] },
  storage: { folders: ['http', 'domain', 'cli'], packages: ['fastify'] },
  documents: { folders: ['http', 'domain', 'storage', 'cli'], packages: ['fastify', 'lmdb', 'pg'] },
}

t.test('layers call downward only', async (t) => {
  const breaches: string[] = []
  for (const [file, imports] of graph) {
    const layer = name(file).split('/')[0]
    const rule = forbidden[layer]
    if (!rule) continue
    for (const target of imports) {
      const folder = target.startsWith(src) ? name(target).split('/')[0] : undefined
      const pkg = target.startsWith('/') ? undefined : target.split('/')[0]
      if ((folder && rule.folders.includes(folder)) || (pkg && rule.packages.includes(pkg))) {
        breaches.push(`${name(file)} → ${folder ? name(target) : target}`)
      }
    }
  }
  t.same(breaches, [], 'imports against the layering')
})
