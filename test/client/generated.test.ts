/**
 * The committed client types (src/client/registry-api.ts) are what openapi-typescript makes of the
 * registry's current /openapi.json (issue 18, item 9): a route, a route schema or the description
 * changed without `npm run generate:client` fails here, before the client, and the CLI that calls the
 * registry only through it, drift from what the server serves.
 */
import { readFileSync } from 'node:fs'
import t from 'tap'
import { clientTypes, GENERATED_FILE, serviceDescription } from '../../scripts/generate-client.js'

t.test('src/client/registry-api.ts is generated from the current description', async (t) => {
  const description = await serviceDescription()
  t.ok(description.paths?.['/v1/apis/{api}/spec'], 'the description read is the registry\'s')
  const generated = await clientTypes(description)
  const committed = readFileSync(GENERATED_FILE, 'utf8')
  if (generated === committed) return t.pass('the committed file is what the generator makes')
  // The first line that differs, so the failure says where (the whole file is 15,000 lines).
  const [mine, theirs] = [generated.split('\n'), committed.split('\n')]
  let at = 0
  while (at < Math.max(mine.length, theirs.length) && mine[at] === theirs[at]) at++
  t.fail('src/client/registry-api.ts differs from the description: run `npm run generate:client` and commit the result', {
    line: at + 1, generated: mine[at], committed: theirs[at],
  })
})
