/** Bundling relative `$ref`s of a snapshot into one document (src/documents/bundle.ts). */
import t from 'tap'
import { parse, stringify } from 'yaml'
import { bundleDocument, SnapshotFileError } from '../../src/documents/bundle.js'
import { registryErrorAsync } from './helpers.js'

const LIMITS = { maxFiles: 100, maxBytes: 1024 * 1024 }

/** Files of a snapshot, as the git reader would give them. */
function snapshot(files: Record<string, unknown>) {
  const reads: string[] = []
  const read = async (path: string) => {
    reads.push(path)
    const file = files[path]
    if (file === undefined) throw new SnapshotFileError('no such file in the branch')
    return typeof file === 'string' ? file : path.endsWith('.json') ? JSON.stringify(file) : stringify(file)
  }
  return { read, reads }
}

t.test('a document without external $refs is returned as its own text', async (t) => {
  const text = '# comment kept\nopenapi: 3.1.0\ninfo: {title: A, version: "1"}\npaths: {}\ncomponents:\n  schemas:\n    A: {type: string}\n    B: {$ref: "#/components/schemas/A"}\n'
  const { read } = snapshot({ 'openapi.yaml': text })
  const result = await bundleDocument('openapi.yaml', read, LIMITS)
  t.equal(result.text, text)
  t.equal(result.format, 'yaml')
  t.same(result.files, ['openapi.yaml'])
})

t.test('a JSON entry stays JSON; each file is read once', async (t) => {
  const { read, reads } = snapshot({
    'openapi.json': { openapi: '3.0.3', components: { schemas: { A: { $ref: 'a.json' }, B: { $ref: 'a.json' }, C: { $ref: 'a.json#/properties/x' } } } },
    'a.json': { type: 'object', properties: { x: { type: 'string' } } },
  })
  const result = await bundleDocument('openapi.json', read, LIMITS)
  t.equal(result.format, 'json')
  const doc = JSON.parse(result.text)
  t.same(doc.components.schemas.A, { type: 'object', properties: { x: { type: 'string' } } })
  t.same(doc.components.schemas.B, { $ref: '#/components/schemas/A' })
  t.same(doc.components.schemas.C, { $ref: '#/components/schemas/A/properties/x' }, 'a part of an inlined piece is referred to there')
  t.same(reads, ['openapi.json', 'a.json'])
})

t.test('siblings of a $ref are laid over the inlined object; refs back into the entry stay internal', async (t) => {
  const { read } = snapshot({
    'openapi.yaml': { openapi: '3.1.0', components: { schemas: { Base: { type: 'string' }, A: { $ref: 'lib/a.yaml', description: 'overridden' } } } },
    'lib/a.yaml': { type: 'object', description: 'original', properties: { base: { $ref: '../openapi.yaml#/components/schemas/Base' } } },
  })
  const doc = parse((await bundleDocument('openapi.yaml', read, LIMITS)).text)
  t.same(doc.components.schemas.A, { type: 'object', description: 'overridden', properties: { base: { $ref: '#/components/schemas/Base' } } })
})

t.test('cycles across files end in internal refs', async (t) => {
  const { read } = snapshot({
    'openapi.yaml': { openapi: '3.1.0', components: { schemas: { Node: { $ref: 'node.yaml' } } } },
    'node.yaml': { type: 'object', properties: { children: { type: 'array', items: { $ref: 'edge.yaml' } } } },
    'edge.yaml': { type: 'object', properties: { to: { $ref: 'node.yaml' } } },
  })
  const doc = parse((await bundleDocument('openapi.yaml', read, LIMITS)).text)
  t.same(doc.components.schemas.Node.properties.children.items.properties.to, { $ref: '#/components/schemas/Node' })
})

t.test('paths with special characters are encoded in the internal refs', async (t) => {
  const { read } = snapshot({
    'openapi.yaml': { openapi: '3.1.0', paths: { '/pets/{id}': { get: { responses: { '200': { $ref: 'r.yaml' } } } }, '/other': { get: { responses: { '200': { $ref: 'r.yaml' } } } } } },
    'r.yaml': { description: 'ok' },
  })
  const doc = parse((await bundleDocument('openapi.yaml', read, LIMITS)).text)
  t.same(doc.paths['/other'].get.responses['200'], { $ref: '#/paths/~1pets~1%7Bid%7D/get/responses/200' })
})

t.test('refused references are problems naming the file and the place', async (t) => {
  const { read } = snapshot({
    'api/openapi.yaml': {
      openapi: '3.1.0',
      components: {
        schemas: {
          Up: { $ref: '../../x.yaml' }, Abs: { $ref: '/x.yaml' }, Url: { $ref: 'http://example.com/x.yaml' },
          Anchor: { $ref: 'a.yaml#Thing' }, Missing: { $ref: 'a.yaml#/nope' }, Gone: { $ref: 'gone.yaml' }, Inner: { $ref: 'b.yaml' },
        },
      },
    },
    'api/a.yaml': { type: 'string' },
    'api/b.yaml': { properties: { x: { $ref: '../../../etc/passwd' } } },
  })
  const error = await registryErrorAsync(bundleDocument('api/openapi.yaml', read, LIMITS))
  t.equal(error.code, 'invalid_document')
  const messages = (error.errors ?? []).map((e) => `${e.file} ${JSON.stringify(e.path)} ${e.message}`)
  t.match(messages, [
    /api\/openapi.yaml \["components","schemas","Up","\$ref"\] .*leaves the repository snapshot/,
    /Abs.*absolute path/,
    /Url.*is a URL/,
    /Anchor.*only JSON pointer fragments/,
    /Missing.*resolves to nothing/,
    /Gone.*no such file/,
    /api\/b.yaml \["properties","x","\$ref"\] .*leaves the repository snapshot/,
  ])
})

t.test('a file that does not parse, and the limits', async (t) => {
  const broken = snapshot({ 'openapi.yaml': { openapi: '3.1.0', components: { schemas: { A: { $ref: 'a.yaml' } } } }, 'a.yaml': 'a: [unclosed' })
  t.match((await registryErrorAsync(bundleDocument('openapi.yaml', broken.read, LIMITS))).message, /'a.yaml' cannot be read as JSON or YAML/)

  const many: Record<string, unknown> = { 'openapi.yaml': { openapi: '3.1.0', components: { schemas: Object.fromEntries(Array.from({ length: 5 }, (_, i) => [`S${i}`, { $ref: `s${i}.yaml` }])) } } }
  for (let i = 0; i < 5; i++) many[`s${i}.yaml`] = { type: 'string' }
  t.match((await registryErrorAsync(bundleDocument('openapi.yaml', snapshot(many).read, { maxFiles: 3, maxBytes: 1024 * 1024 }))).message, /more than 3 files/)

  const big = snapshot({ 'openapi.yaml': { openapi: '3.1.0', components: { schemas: { A: { $ref: 'a.yaml' } } } }, 'a.yaml': { description: 'x'.repeat(5000) } })
  t.match((await registryErrorAsync(bundleDocument('openapi.yaml', big.read, { maxFiles: 10, maxBytes: 4000 }))).message, /larger than 4000 bytes/)
})

t.test('pieces nested past the depth limit are refused, not serialized', async (t) => {
  const files: Record<string, unknown> = { 'openapi.yaml': { openapi: '3.1.0', components: { schemas: { A: { $ref: 'f0.yaml' } } } } }
  const deep = (next: string) => {
    let node: Record<string, unknown> = { $ref: next }
    for (let i = 0; i < 200; i++) node = { items: node }
    return node
  }
  for (let i = 0; i < 5; i++) files[`f${i}.yaml`] = deep(`f${i + 1}.yaml`)
  files['f5.yaml'] = { type: 'string' }
  const error = await registryErrorAsync(bundleDocument('openapi.yaml', snapshot(files).read, LIMITS))
  t.equal(error.code, 'invalid_document')
  t.match(error.message, /nested too deeply/)
})

t.test('a __proto__ key stays an ordinary key', async (t) => {
  const { read } = snapshot({
    'openapi.json': '{"openapi":"3.1.0","components":{"schemas":{"__proto__":{"$ref":"a.json"}}}}',
    'a.json': '{"type":"string"}',
  })
  const doc = JSON.parse((await bundleDocument('openapi.json', read, LIMITS)).text)
  t.same(Object.getOwnPropertyDescriptor(doc.components.schemas, '__proto__')?.value, { type: 'string' })
  t.equal(Object.getPrototypeOf(doc.components.schemas), Object.prototype)
})
