/**
 * Dogfooding: this service's own /openapi.json becomes an API, an SDK of it is built for both targets,
 * and the generated clients list the APIs of the live server: the TypeScript one compiled with tsc
 * and run by node, the PHP one checked with `php -l` and run by php.
 */
import { execFile } from 'node:child_process'
import { mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { promisify } from 'node:util'
import t from 'tap'
import { startGitHttpServer } from '../support/git-http-server.js'
import { OUTBOUND_LOOPBACK, json, startTestServer, tempDir } from '../helpers.js'
import { ROOT } from '../process/spawn.js'
import { createApi, seed, skipWithoutPhp, waitForBuild } from './support.js'

const run = promisify(execFile)

function phpFiles(dir: string): string[] {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile() && e.name.endsWith('.php')).map((e) => join(e.parentPath, e.name)).sort()
}

t.test('the registry generates SDKs of itself, and both list its APIs on the live server', async (t) => {
  const root = tempDir('sdk-git-')
  const work = tempDir('sdk-dogfood-')
  const server = await startGitHttpServer(root)
  const s = await startTestServer({ outboundHosts: OUTBOUND_LOOPBACK })
  t.teardown(async () => { await s.close(); await server.close(); rmSync(root, { recursive: true, force: true }); rmSync(work, { recursive: true, force: true }) })
  const base = await s.app.listen({ port: 0, host: '127.0.0.1' })

  const own = json(await s.app.inject({ url: '/openapi.json' }))
  const api = await createApi(s, 'Registry', own)
  await createApi(s, 'Petstore')
  const sdk = json(await s.call({ method: 'POST', url: '/v1/sdks', payload: { name: 'Registry SDK', targets: ['typescript', 'php'], apis: [{ api_id: api }] } })).data
  for (const target of ['typescript', 'php']) {
    server.createBare(`registry-${target}`)
    await seed(`${server.url}/registry-${target}.git`)
    const put = await s.call({ method: 'PUT', url: `/v1/sdks/${sdk.id}/targets/${target}/repository`, payload: { provider: 'git', url: `${server.url}/registry-${target}.git` } })
    t.equal(put.statusCode, 201, put.body)
  }
  const builds = json(await s.call({ method: 'POST', url: `/v1/sdks/${sdk.id}/builds` })).data
  t.same(builds.map((b: any) => b.target).sort(), ['php', 'typescript'])
  const dirs: Record<string, string> = {}
  for (const build of builds) {
    const done = await waitForBuild(s, build.id)
    t.equal(done.status, 'succeeded', done.error)
    const artifact = await s.call({ method: 'GET', url: `/v1/builds/${build.id}/artifact` })
    const dir = join(work, build.target)
    mkdirSync(dir)
    writeFileSync(join(work, `${build.target}.tar.gz`), artifact.rawPayload)
    await run('tar', ['-xzf', join(work, `${build.target}.tar.gz`), '-C', dir])
    dirs[build.target] = dir
  }

  t.test('TypeScript: compiles with tsc, and lists the APIs', async (t) => {
    const dir = dirs.typescript
    writeFileSync(join(dir, 'src', 'dogfood.ts'), `
import { registry, registryClient } from './index.js'

// The package has no dependencies (not even @types/node): the script declares what it uses of Node.
declare const process: { argv: string[] }
registryClient.setConfig({ baseUrl: process.argv[2], headers: { Authorization: \`Bearer \${process.argv[3]}\` } })
const { data, error, response } = await registry.getApis({ query: { limit: 100 } })
if (error || !data) throw new Error(\`listing failed: \${response.status}\`)
const names: string[] = data.data.map((api) => api.name)
console.log(JSON.stringify({ status: response.status, total: data.total, names }))
`)
    await run(process.execPath, [join(ROOT, 'node_modules/typescript/bin/tsc'), '-p', join(dir, 'tsconfig.json')])
    const { stdout } = await run(process.execPath, [join(dir, 'dist', 'dogfood.js'), base, s.key])
    t.same(JSON.parse(stdout), { status: 200, total: 2, names: ['Petstore', 'Registry'] })
  })

  t.test('PHP: every file passes php -l, and the client lists the APIs', { skip: skipWithoutPhp }, async (t) => {
    const dir = dirs.php
    const files = phpFiles(dir)
    t.ok(files.length >= 3)
    for (const file of files) {
      const { stdout } = await run('php', ['-l', file])
      t.match(stdout, /No syntax errors detected/, file.slice(dir.length))
    }
    writeFileSync(join(work, 'dogfood.php'), `<?php
declare(strict_types=1);
require $argv[1] . '/autoload.php';

use RegistrySdk\\ApiException;
use RegistrySdk\\Registry\\Client;

$client = new Client($argv[2], $argv[3]);
$apis = $client->getApis(null, 100);
$missing = null;
try {
    $client->getApi('01ARZ3NDEKTSV4RRFFQ69G5FAV');
} catch (ApiException $e) {
    $missing = ['status' => $e->status, 'code' => $e->body['code']];
}
echo json_encode(['total' => $apis['total'], 'names' => array_map(fn (array $api) => $api['name'], $apis['data']), 'missing' => $missing]);
`)
    const { stdout } = await run('php', [join(work, 'dogfood.php'), dir, base, s.key])
    t.same(JSON.parse(stdout), { total: 2, names: ['Petstore', 'Registry'], missing: { status: 404, code: 'not_found' } })
  })
})
