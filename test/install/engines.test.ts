/**
 * The Node.js lines the project supports (package.json `engines`) are the ones every installed package
 * accepts: `npm ci` warns EBADENGINE otherwise, and a dependency that needs a newer Node can break at
 * run time on the oldest line the README names. The README, the Dockerfile and `.ci/run` name lines
 * within that range.
 */
import { readFileSync, readdirSync } from 'node:fs'
import { join } from 'node:path'
import semver from 'semver'
import t from 'tap'

const root = join(import.meta.dirname, '..', '..')
const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { engines: { node: string } }
const supported = pkg.engines.node

/** The oldest release of each line `engines` allows (20.19.0, 22.12.0, 24.0.0 for `^20.19.0 || ^22.12.0 || >=24`). */
const oldestOfEachLine = new semver.Range(supported).set.map((comparators) =>
  semver.minVersion(comparators.map((c) => c.value).join(' '))!.version)

interface Installed {
  name: string
  version: string
  engines?: { node?: string }
}

/** Every package under node_modules, nested and scoped ones included. */
function installedPackages(dir: string): Installed[] {
  const found: Installed[] = []
  let entries: string[]
  try {
    entries = readdirSync(dir)
  } catch {
    return found
  }
  for (const entry of entries) {
    if (entry.startsWith('.')) continue
    if (entry.startsWith('@')) {
      found.push(...installedPackages(join(dir, entry)))
      continue
    }
    const packageDir = join(dir, entry)
    try {
      found.push(JSON.parse(readFileSync(join(packageDir, 'package.json'), 'utf8')) as Installed)
    } catch {
      continue
    }
    found.push(...installedPackages(join(packageDir, 'node_modules')))
  }
  return found
}

t.test('engines names whole lines, the running Node among them', async (t) => {
  t.same(oldestOfEachLine.map((v) => semver.major(v)), [20, 22, 24], 'Node 20.19+, 22 and 24')
  t.ok(semver.satisfies(process.version, supported), `${process.version} satisfies ${supported}`)
})

t.test('every installed package accepts the oldest release of each supported line and the running Node', async (t) => {
  const packages = installedPackages(join(root, 'node_modules'))
  t.ok(packages.length > 100, `${packages.length} installed packages read`)
  const excluding = packages.flatMap((p) => {
    const range = p.engines?.node
    if (typeof range !== 'string' || !semver.validRange(range)) return []
    const refused = [process.version, ...oldestOfEachLine].filter((v) => !semver.satisfies(v, range))
    return refused.length > 0 ? [`${p.name}@${p.version} needs node ${range} (refuses ${refused.join(', ')})`] : []
  })
  t.same(excluding, [], 'no EBADENGINE: see the overrides in package.json')
})

t.test('the README, the Dockerfile and .ci/run name supported lines', async (t) => {
  const readme = readFileSync(join(root, 'README.md'), 'utf8')
  t.match(readme, /Node\.js 22 or 24 \(the LTS lines; recommended\) or 20\.19\+/, 'the README names the lines')
  const images = [...readFileSync(join(root, 'Dockerfile'), 'utf8').matchAll(/^FROM node:(\d+)\S*/gm)]
  t.ok(images.length > 0, 'the Dockerfile starts from node images')
  for (const [from, major] of images) t.ok(semver.satisfies(`${major}.99.0`, supported), `${from}: a supported line`)
  t.match(readFileSync(join(root, '.ci', 'run'), 'utf8'), /--engine-strict/, '.ci/run installs with --engine-strict')
})
