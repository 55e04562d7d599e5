/**
 * Every relative link in the project's Markdown resolves in a fresh clone (issue 15, item 1): the
 * target is a tracked file or folder of this repository, and an `#anchor` into a Markdown file names
 * one of its headings (GitHub's heading ids). A link out of the repository (the old
 * `../shared/spec/CONTRACT.md`) is dead in every clone, whatever this machine has beside the checkout.
 */
import { execFileSync } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { dirname, join, normalize, relative } from 'node:path'
import MarkdownIt from 'markdown-it'
import t from 'tap'

const root = join(import.meta.dirname, '..', '..')
const markdown = new MarkdownIt({ html: true })

// Tracked files, and new ones not ignored (what the next commit can carry): what a clone has.
const tracked = execFileSync('git', ['ls-files', '-z', '--cached', '--others', '--exclude-standard'], { cwd: root, encoding: 'utf8' })
  .split('\0').filter(Boolean)
const trackedFiles = new Set(tracked)
const trackedDirs = new Set(tracked.flatMap((file) => {
  const parts = file.split('/')
  return parts.slice(1).map((_, i) => parts.slice(0, i + 1).join('/'))
}))
const documents = tracked.filter((file) => file.endsWith('.md') && !/^(node_modules|storage)\//.test(file) && !file.includes('/node_modules/'))

type Token = ReturnType<typeof markdown.parse>[number]

/** GitHub's heading ids: lower case, punctuation dropped, spaces to hyphens, repeats numbered. */
function headingIds(tokens: Token[]): Set<string> {
  const ids = new Set<string>()
  const seen = new Map<string, number>()
  tokens.forEach((token, i) => {
    if (token.type !== 'heading_open') return
    const text = (tokens[i + 1].children ?? []).filter((c) => c.type === 'text' || c.type === 'code_inline').map((c) => c.content).join('')
    const base = text.trim().toLowerCase().replace(/[^\p{L}\p{N}\s_-]/gu, '').replace(/\s/g, '-')
    const n = seen.get(base) ?? 0
    seen.set(base, n + 1)
    ids.add(n === 0 ? base : `${base}-${n}`)
  })
  return ids
}

const parsed = new Map<string, Token[]>()
function tokensOf(file: string): Token[] {
  let tokens = parsed.get(file)
  if (!tokens) {
    tokens = markdown.parse(readFileSync(join(root, file), 'utf8'), {})
    parsed.set(file, tokens)
  }
  return tokens
}

/** Link targets of a Markdown file: links and images, not what is inside code. */
function targets(file: string): string[] {
  const found: string[] = []
  const visit = (tokens: Token[]) => {
    for (const token of tokens) {
      if (token.type === 'link_open') found.push(String(token.attrGet('href') ?? ''))
      if (token.type === 'image') found.push(String(token.attrGet('src') ?? ''))
      if (token.children) visit(token.children)
    }
  }
  visit(tokensOf(file))
  return found
}

/** Why a link does not resolve in a clone, or undefined when it does. */
function problem(from: string, href: string): string | undefined {
  if (/^[a-z][a-z0-9+.-]*:/i.test(href) || href.startsWith('//')) return undefined
  const [pathPart, anchor] = href.split('#', 2) as [string, string | undefined]
  const path = decodeURIComponent(pathPart)
  const target = path === '' ? from : normalize(path.startsWith('/') ? path.slice(1) : join(dirname(from), path)).replace(/\/$/, '')
  if (target.startsWith('..') || relative(root, join(root, target)).startsWith('..')) return 'points outside the repository'
  if (!trackedFiles.has(target) && !trackedDirs.has(target) && target !== '.') return `${target} is not in the repository`
  if (anchor !== undefined && target.endsWith('.md') && !headingIds(tokensOf(target)).has(decodeURIComponent(anchor))) {
    return `${target} has no heading #${anchor}`
  }
  return undefined
}

t.test('the README and the docs are checked', async (t) => {
  t.ok(documents.includes('README.md'))
  t.ok(documents.includes('docs/api.md'), 'the interface reference is in the repository')
  t.ok(documents.filter((d) => d.startsWith('docs/')).length >= 5)
})

t.test('every relative link and anchor in the Markdown resolves in the checkout', async (t) => {
  for (const file of documents) {
    const broken = targets(file).flatMap((href) => {
      const why = problem(file, href)
      return why ? [`${href}: ${why}`] : []
    })
    t.same(broken, [], file)
  }
})

t.test('the README points at the interface reference and the service description', async (t) => {
  const readme = readFileSync(join(root, 'README.md'), 'utf8')
  t.ok(targets('README.md').includes('docs/api.md'), 'a link to docs/api.md')
  t.match(readme, /`\/openapi\.json`/)
  t.notMatch(readme, /shared\/spec/, 'nothing from outside the repository')
})

t.test('the checker finds what it should', async (t) => {
  t.equal(problem('README.md', '../shared/spec/CONTRACT.md'), 'points outside the repository')
  t.equal(problem('README.md', 'docs/nope.md'), 'docs/nope.md is not in the repository')
  t.equal(problem('README.md', 'docs/api.md#no-such-heading'), 'docs/api.md has no heading #no-such-heading')
  t.equal(problem('docs/api.md', '#ids-and-slugs'), undefined)
  t.equal(problem('docs/api.md', '../README.md#storage-backup-and-restore'), undefined)
  t.equal(problem('README.md', 'https://example.com/x'), undefined)
  t.same(targets('docs/api.md').filter((h) => h === '#errors').length > 0, true)
})
