/** The generators on their own: PHP output (syntax, models, requests it sends), determinism, the archive. */
import { execFile } from 'node:child_process'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { mkdirSync, rmSync, writeFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { promisify } from 'node:util'
import t from 'tap'
import { generate } from '../../src/sdk/generate.js'
import { generatePhp } from '../../src/sdk/php/generator.js'
import { tarGz } from '../../src/sdk/tarball.js'
import type { GenerateTask, GeneratedFile } from '../../src/sdk/types.js'
import { petstore, tempDir, workerExecArgv } from '../helpers.js'
import { skipWithoutPhp } from './support.js'

const run = promisify(execFile)

/** A petstore with the shapes a generator must handle: path, query and body parameters, odd names. */
function richPetstore(): Record<string, any> {
  const doc = petstore() as Record<string, any>
  doc.paths['/pets'].post = {
    operationId: 'create-pet', summary: 'Create a pet */ with a comment end',
    parameters: [{ name: 'dry-run', in: 'query', schema: { type: 'boolean' } }],
    requestBody: { required: true, content: { 'application/json': { schema: { $ref: '#/components/schemas/Pet' } } } },
    responses: { '201': { description: 'created' } },
  }
  doc.paths['/pets'].get.parameters = [
    { name: 'limit', in: 'query', schema: { type: 'integer' } },
    { name: 'tags', in: 'query', schema: { type: 'array', items: { type: 'string' } } },
  ]
  doc.paths['/pets/{pet id}'] = {
    parameters: [{ name: 'pet id', in: 'path', required: true, schema: { type: 'string' } }],
    get: { responses: { '200': { description: 'a pet' } } },
    delete: { operationId: 'list', responses: { '204': { description: 'gone' } } },
  }
  doc.components.schemas.class = { type: 'object', properties: { 'x-owner': { type: 'string' }, 'weight kg': { type: 'number' }, tags: { type: 'array' } } }
  doc.components.schemas.Status = { type: 'string', enum: ['available', 'sold'] }
  return doc
}

const task = (target: 'php' | 'typescript', document = richPetstore()): GenerateTask => ({
  target, sdk: { name: 'Pets', slug: 'pets' }, config: { package_version: '2.0.0', php: { namespace: 'Acme\\Pets' } },
  apis: [{ slug: 'petstore', name: 'Petstore', document }],
})

function writeTree(dir: string, files: GeneratedFile[]): void {
  for (const file of files) {
    mkdirSync(dirname(join(dir, file.path)), { recursive: true })
    writeFileSync(join(dir, file.path), file.content)
  }
}

t.test('PHP: a PSR-4 package whose files all pass php -l, with one model per schema', { skip: skipWithoutPhp }, async (t) => {
  const files = generatePhp(task('php'))
  const paths = files.map((f) => f.path).sort()
  t.same(paths, [
    'README.md', 'autoload.php', 'composer.json', 'src/ApiException.php', 'src/Petstore/Client.php',
    'src/Petstore/Model/ClassModel.php', 'src/Petstore/Model/Pet.php', 'src/Petstore/Model/Status.php',
  ])
  const composer = JSON.parse(files.find((f) => f.path === 'composer.json')!.content)
  t.match(composer, { name: 'registry/pets', version: '2.0.0', require: { php: '>=8.1', 'ext-json': '*' }, autoload: { 'psr-4': { 'Acme\\Pets\\': 'src/' } } })
  t.same(Object.keys(composer.require), ['php', 'ext-json'], 'standard extensions only')
  const dir = tempDir('sdk-php-')
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  writeTree(dir, files)
  for (const path of paths.filter((p) => p.endsWith('.php'))) {
    const { stdout } = await run('php', ['-l', join(dir, path)])
    t.match(stdout, /No syntax errors/, path)
  }
  t.same(generatePhp(task('php')), files, 'deterministic')
})

t.test('PHP: the client sends path, query, body and bearer auth as the document says; models round-trip', { skip: skipWithoutPhp }, async (t) => {
  const seen: { method: string; url: string; auth?: string; type?: string; body: string }[] = []
  const server = createServer((request, response) => {
    let body = ''
    request.on('data', (c) => { body += c })
    request.on('end', () => {
      seen.push({ method: request.method!, url: request.url!, auth: request.headers.authorization, type: request.headers['content-type'], body })
      if (request.url!.startsWith('/pets/missing')) return response.writeHead(404, { 'content-type': 'application/problem+json' }).end('{"detail":"no such pet","code":"not_found"}')
      response.writeHead(200, { 'content-type': 'application/json' }).end('[{"id":1,"name":"Rex"}]')
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const dir = tempDir('sdk-php-')
  t.teardown(async () => { server.closeAllConnections(); await new Promise((r) => server.close(r)); rmSync(dir, { recursive: true, force: true }) })
  writeTree(dir, generatePhp(task('php')))
  writeFileSync(join(dir, 'use.php'), `<?php
declare(strict_types=1);
require __DIR__ . '/autoload.php';
use Acme\\Pets\\Petstore\\Client;
use Acme\\Pets\\Petstore\\Model\\Pet;
use Acme\\Pets\\Petstore\\Model\\ClassModel;
use Acme\\Pets\\ApiException;
$client = new Client($argv[1], 'tok');
$pets = $client->listPets(5, ['a', 'b c']);
$client->createPet(['name' => 'Rex'], true);
$client->getPetsByPetId('x/y');
$client->list('7');
$pet = Pet::fromArray($pets[0]);
$odd = ClassModel::fromArray(['x-owner' => 'me', 'weight kg' => 2.5]);
try { $client->getPetsByPetId('missing'); } catch (ApiException $e) { $error = [$e->status, $e->getMessage()]; }
echo json_encode(['pet' => $pet, 'name' => $pet->name, 'odd' => $odd, 'owner' => $odd->xOwner, 'error' => $error]);
`)
  const { stdout } = await run('php', [join(dir, 'use.php'), `http://127.0.0.1:${(server.address() as AddressInfo).port}`])
  t.same(JSON.parse(stdout), {
    pet: { id: 1, name: 'Rex' }, name: 'Rex', odd: { 'x-owner': 'me', 'weight kg': 2.5 }, owner: 'me',
    error: [404, 'GET /pets/missing answered 404: no such pet'],
  })
  t.match(seen, [
    { method: 'GET', url: '/pets?limit=5&tags=a&tags=b%20c', auth: 'Bearer tok' },
    { method: 'POST', url: '/pets?dry-run=true', type: 'application/json', body: '{"name":"Rex"}' },
    { method: 'GET', url: '/pets/x%2Fy' },
    { method: 'DELETE', url: '/pets/7' },
    { method: 'GET', url: '/pets/missing' },
  ])
})

t.test('both generators are deterministic: the same inputs give a byte-identical archive', async (t) => {
  for (const target of ['typescript', 'php'] as const) {
    const signal = new AbortController().signal
    const first = await generate(task(target), { signal, timeoutMs: 60_000, execArgv: workerExecArgv() })
    const second = await generate(task(target), { signal, timeoutMs: 60_000, execArgv: workerExecArgv() })
    t.ok((await tarGz(first)).equals(await tarGz(second)), `${target}: byte-identical`)
    t.same(first.map((f) => f.path), first.map((f) => f.path).sort(), `${target}: sorted`)
    const changed = richPetstore()
    changed.paths['/pets'].get.operationId = 'listAllPets'
    const other = await tarGz(await generate(task(target, changed), { signal, timeoutMs: 60_000, execArgv: workerExecArgv() }))
    t.notOk(other.equals(await tarGz(first)), `${target}: another input, another archive`)
  }
  const [ba, ab] = [await tarGz([{ path: 'b', content: '2' }, { path: 'a', content: '1' }]), await tarGz([{ path: 'a', content: '1' }, { path: 'b', content: '2' }])]
  t.ok(ba.equals(ab), 'entry order does not matter')
})

t.test('a generator run is ended when it is aborted', async (t) => {
  const controller = new AbortController()
  const running = generate(task('typescript'), { signal: controller.signal, timeoutMs: 60_000, execArgv: workerExecArgv() })
  controller.abort(new Error('stop'))
  await t.rejects(running, { message: 'stop' })
})
