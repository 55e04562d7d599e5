/**
 * The README's walkthrough works as written on a fresh machine with bash, curl and jq (issue 15, item
 * 3): its shell block is taken from README.md and run by bash, from the checkout, against a real server
 * on a temporary storage. Only the key (printed on first start) and the address are filled in, as a
 * reader would. Each answer the README shows under a command is checked against what the command printed.
 */
import { execFile } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { promisify } from 'node:util'
import t from 'tap'
import { tempDir } from '../helpers.js'
import { ROOT, startServer, userEnv } from './spawn.js'

const run = promisify(execFile)

/** One command of the block (its lines joined as bash reads them) and the answer shown under it. */
interface Step {
  command: string
  shown: string | undefined
}

/** The first bash block under "## A walkthrough with curl". */
function walkthroughBlock(readme: string): string {
  const section = readme.slice(readme.indexOf('## A walkthrough with curl'))
  const match = /```bash\n([\s\S]*?)```/.exec(section)
  if (!match) throw new Error('no bash block in the walkthrough')
  return match[1]
}

/**
 * Splits the block into commands. A command is a line that is not a comment, with the lines its
 * trailing backslashes continue; the answer is the comment lines right under it (explanations are
 * comment lines after a blank line, above the next command).
 */
function steps(block: string): Step[] {
  const lines = block.split('\n')
  const found: Step[] = []
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]
    if (line.trim() === '' || line.startsWith('#')) continue
    const command = [line]
    while (command[command.length - 1].endsWith('\\')) command.push(lines[++i])
    const shown: string[] = []
    while (i + 1 < lines.length && lines[i + 1].startsWith('# ')) shown.push(lines[++i].slice(2))
    found.push({ command: command.join('\n'), shown: shown.length > 0 ? shown.join('\n') : undefined })
  }
  return found
}

/**
 * Whether the output holds what the README shows: whitespace aside (the README wraps long answers),
 * each piece between the `…` elisions appears, in order.
 */
function holds(output: string, shown: string): boolean {
  const actual = output.replace(/\s+/g, '')
  let from = 0
  for (const piece of shown.split('…').map((p) => p.replace(/\s+/g, '')).filter(Boolean)) {
    const at = actual.indexOf(piece, from)
    if (at === -1) return false
    from = at + piece.length
  }
  return true
}

t.test('the walkthrough needs nothing the README does not name', async (t) => {
  const block = walkthroughBlock(readFileSync(join(ROOT, 'README.md'), 'utf8'))
  t.notMatch(block, /\byq\b/, 'no yq (Debian has another tool by that name)')
  for (const file of new Set([...block.matchAll(/@([\w.-]+\.(?:ya?ml|json))/g)].map((m) => m[1]))) {
    t.ok(readFileSync(join(ROOT, 'examples', file)), `examples/${file} is in the repository`)
  }
  t.equal(steps(block).filter((s) => s.command.startsWith('curl')).every((s) => s.shown !== undefined), true,
    'every curl command shows its answer')
})

t.test('every command of the walkthrough works as written and answers what the README shows', async (t) => {
  const storage = tempDir()
  const server = await startServer(storage)
  t.teardown(() => server.stop())
  t.ok(server.key, 'the first start printed a key')

  const block = walkthroughBlock(readFileSync(join(ROOT, 'README.md'), 'utf8'))
  t.match(block, /^export KEY=sk_…/m)
  t.match(block, /^export R=http:\/\/127\.0\.0\.1:8080$/m)
  const all = steps(block)
  // The reader pastes their key; the server here listens on another port.
  const script = ['set -euo pipefail', ...all.map((step, i) => `echo "@@step ${i}"\n${step.command
    .replace('export KEY=sk_…', `export KEY=${server.key}`)
    .replace('export R=http://127.0.0.1:8080', `export R=${server.url}`)}\necho`)].join('\n')
  const { stdout } = await run('bash', ['-c', script], { cwd: ROOT, env: userEnv(), maxBuffer: 16 * 1024 * 1024 })
  const outputs = stdout.split(/^@@step \d+\n/m).slice(1)
  t.equal(outputs.length, all.length, 'every command ran')
  all.forEach((step, i) => {
    if (step.shown === undefined) return
    t.ok(holds(outputs[i], step.shown), `${step.command.split('\n')[0]}`, { shown: step.shown, printed: outputs[i].slice(0, 2000) })
  })

  // What the answers mean, beyond their text: versions 1 to 3, the lint-blocked upload stored nothing.
  const { stdout: versions } = await run('curl', ['-s', '-H', `Authorization: Bearer ${server.key}`, `${server.url}/v1/apis/petstore/versions`])
  t.same(JSON.parse(versions).data.map((v: { number: number; source: string }) => [v.number, v.source]),
    [[3, 'restore'], [2, 'upload'], [1, 'upload']])
})

t.test('the checker refuses an answer that is not there', async (t) => {
  t.ok(holds('{"data":{"number":1,"format":"yaml"}}', '{"data":{…,"format":"yaml"…'))
  t.notOk(holds('{"data":{"number":1,"format":"yaml"}}', '{"data":{…"number":2…'))
  t.notOk(holds('{"a":1,"b":2}', '"b":2…"a":1'), 'in order')
  t.same(steps('# about\ncurl -s \\\n  x\n# {"a":1}\n\n# next\nRS=$(y)\n'), [
    { command: 'curl -s \\\n  x', shown: '{"a":1}' }, { command: 'RS=$(y)', shown: undefined },
  ])
})
