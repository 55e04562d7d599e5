import t from 'tap'
import { locatePaths } from '../../src/documents/positions.js'

/** Numbered as an editor shows them. */
const YAML = `# the pets
openapi: 3.1.0
info: { title: Pets, version: "1" }
paths:
  /pets:
    get:
      tags: [pets, "read"]
      responses:
        '200':
          $ref: '#/components/responses/Pets'
x-defaults: &defaults
  deprecated: true
x-merged:
  <<: *defaults
x-alias: *defaults
`

const JSON_TEXT = `{
  "openapi": "3.1.0",
  "info": { "title": "Pets", "version": "1" },
  "paths": {
    "/pets": {
      "get": {
        "tags": ["pets", "read"],
        "responses": {
          "200": { "$ref": "#/components/responses/Pets" }
        }
      }
    }
  }
}
`

t.test('a member is at its key, an item at the item, YAML and JSON alike', async (t) => {
  const paths = [['paths', '/pets', 'get'], ['paths', '/pets', 'get', 'tags', 1], ['info', 'title'], ['paths', '/pets', 'get', 'responses', '200']]
  t.same(locatePaths(YAML, paths), [{ line: 6, column: 5 }, { line: 7, column: 20 }, { line: 3, column: 9 }, { line: 9, column: 9 }])
  t.same(locatePaths(JSON_TEXT, paths), [{ line: 6, column: 7 }, { line: 7, column: 26 }, { line: 3, column: 13 }, { line: 9, column: 11 }])
  t.same(locatePaths(JSON_TEXT, paths, 'json'), locatePaths(JSON_TEXT, paths), 'the format given or found in the text')
})

t.test('a path the text does not hold stops at the deepest part it has', async (t) => {
  const missing = ['paths', '/pets', 'get', 'description']
  const bundled = ['paths', '/pets', 'get', 'responses', '200', 'content', 'application/json']
  t.same(locatePaths(YAML, [missing, bundled, [], ['nothing', 'here']]), [{ line: 6, column: 5 }, { line: 9, column: 9 }, { line: 2, column: 1 }, { line: 2, column: 1 }],
    'the object that lacks the member, the member whose $ref brings the rest in, the document')
  t.same(locatePaths(JSON_TEXT, [missing, bundled, []]), [{ line: 6, column: 7 }, { line: 9, column: 11 }, { line: 1, column: 1 }])
  t.same(locatePaths(YAML, [['x-merged', 'deprecated'], ['x-alias', 'deprecated']]), [{ line: 13, column: 1 }, { line: 15, column: 1 }],
    'the inside of a merge key or an alias is where the text has it no more')
  t.same(locatePaths(YAML, [['paths', '/pets', 'get', 'tags', 2], ['paths', '/pets', 'get', 'tags', 'x']]), [{ line: 7, column: 7 }, { line: 7, column: 7 }], 'no such item')
})

t.test('JSON as JSON.parse reads it: escaped keys, the last of duplicate keys, strings that look like structure', async (t) => {
  const text = '\ufeff {"a\\u0062": {"x": [1, {"y": "\\"}]"}]}, "ab": {"z": "{["},\n"ab": {"z": 2}}'
  t.same(locatePaths(text, [['ab', 'z'], ['ab', 'x', 1, 'y']]), [{ line: 2, column: 8 }, { line: 2, column: 1 }])
  t.same(locatePaths('{"a": {"b": 1}, "c": [true, null, -1.5e3, {"d": []}]}', [['c', 3, 'd'], ['a', 'b']]), [{ line: 1, column: 44 }, { line: 1, column: 8 }])
})

t.test('lines end at LF whatever precedes it; columns count UTF-16 code units', async (t) => {
  t.same(locatePaths('a: 1\r\nb:\r\n  c: 2\r\n', [['b', 'c']]), [{ line: 3, column: 3 }])
  t.same(locatePaths('{"🐈": 1, "d": 2}', [['d']]), [{ line: 1, column: 11 }])
})
