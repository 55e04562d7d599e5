import { spawn } from 'node:child_process'
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import t from 'tap'
import { parse } from 'yaml'
import { tempDir } from '../temp.js'
import { api, ROOT, startServer, untapped, userEnv, type Exit } from './spawn.js'

interface Step { id?: string; run: string; env?: Record<string, string> }
interface Action { inputs: Record<string, { default?: string }>; runs: { using: string; steps: Step[] } }

const action = parse(readFileSync(join(ROOT, 'action.yml'), 'utf8')) as Action

/** The step's environment as GitHub evaluates it: `${{ inputs.x }}` is the input given, else its default. */
function stepEnv(step: Step, inputs: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.entries(step.env ?? {}).map(([name, value]) => [name,
    value.replace(/\$\{\{\s*inputs\.([\w-]+)\s*\}\}/g, (_, input: string) => inputs[input] ?? action.inputs[input]?.default ?? '')]))
}

/** Runs the action's CLI step (its `run:` as written in action.yml) with bash in a workspace, as a runner does. */
function runStep(workspace: string, inputs: Record<string, string>, env: Record<string, string>): Promise<Exit> {
  const step = action.runs.steps.find((s) => s.id === 'registry')!
  return new Promise((resolve, reject) => {
    // GitHub runs a bash step as `bash --noprofile --norc -eo pipefail {0}`.
    const child = spawn(...untapped('bash', ['--noprofile', '--norc', '-eo', 'pipefail', '-c', step.run]), {
      cwd: workspace, env: userEnv({ ...env, ...stepEnv(step, inputs), GITHUB_ACTION_PATH: ROOT }), stdio: ['ignore', 'pipe', 'pipe'],
    })
    let stdout = ''
    let stderr = ''
    child.stdout!.on('data', (chunk) => { stdout += chunk })
    child.stderr!.on('data', (chunk) => { stderr += chunk })
    child.once('error', reject)
    child.once('exit', (code) => resolve({ code, stdout, stderr }))
  })
}

t.test('action.yml is a composite action that installs the CLI and runs it with npx', async (t) => {
  t.equal(action.runs.using, 'composite')
  t.match(action.runs.steps[0].run, /npm ci .*--prefix "\$GITHUB_ACTION_PATH"/)
  t.match(action.runs.steps.find((s) => s.id === 'registry')!.run, /npx --no-install --prefix "\$GITHUB_ACTION_PATH" registry /)
})

t.test("the action's command publishes, and annotates a refused document, against a real server", async (t) => {
  const storage = tempDir()
  const workspace = tempDir()
  t.teardown(() => { rmSync(storage, { recursive: true, force: true }); rmSync(workspace, { recursive: true, force: true }) })
  const server = await startServer(storage)
  t.teardown(() => server.stop('SIGKILL'))
  mkdirSync(join(workspace, 'api'))
  writeFileSync(join(workspace, 'api', 'openapi.yaml'), 'openapi: 3.1.0\ninfo:\n  title: Shop\n  version: 1.0.0\npaths:\n  /orders:\n    get:\n      responses:\n        "200":\n          $ref: "./responses.yaml#/Orders"\n')
  writeFileSync(join(workspace, 'api', 'responses.yaml'), 'Orders:\n  description: the orders\n')
  // The secret comes in as an input, the URL from the job's environment.
  const env = { REGISTRY_URL: server.url, XDG_CONFIG_HOME: workspace }

  const published = await runStep(workspace, { resource: 'shop', file: 'api/openapi.yaml', create: 'true', key: server.key! }, env)
  t.equal(published.code, 0, published.stderr)
  t.match(published.stdout, /^published shop v1 \(sha256:[0-9a-f]{64}\)$/m)
  const stored = await (await api(server.url, server.key!, 'GET', '/v1/apis/shop/spec')).json()
  t.same(stored.paths['/orders'].get.responses['200'], { description: 'the orders' }, 'bundled from the file next to it')

  writeFileSync(join(workspace, 'api', 'openapi.yaml'), 'openapi: 3.1.0\ninfo:\n  title: Shop\n  version: 2.0.0\npaths:\n  /orders:\n    get:\n      responses:\n        "200":\n          description: ok\n          content:\n            application/json:\n              schema: { $ref: "#/components/schemas/Missing" }\n')
  const refused = await runStep(workspace, { resource: 'shop', file: 'api/openapi.yaml', key: server.key! }, env)
  t.equal(refused.code, 1, 'blocked: the job fails')
  t.match(refused.stdout, /^::error file=api\/openapi\.yaml,line=13,col=15,title=invalid_document::unresolved \$ref/m, 'an annotation on the line of the file in the workspace')
  t.equal((await (await api(server.url, server.key!, 'GET', '/v1/apis/shop/versions')).json()).total, 1, 'nothing stored')

  const wrongKey = await runStep(workspace, { command: 'lint', resource: 'shop', file: 'api/openapi.yaml', key: 'sk_wrong' }, env)
  t.equal(wrongKey.code, 2)
  t.match(wrongKey.stderr, /refused the API key \(401\)/)
})
