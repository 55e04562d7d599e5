import { writeFile } from 'node:fs/promises'
import { Command, Option } from 'commander'
import { problemOf, type Problem } from '../../client/index.js'
import { CONVERTED_FROM_NAMES, type ConvertedFrom } from '../../documents/import-formats.js'
import { pointerSegments, unescapeSegment } from '../../documents/pointer.js'
import { checkedUrl, connect, forgetCredentials, resolveCredentials, saveCredentials, unexpected, usage, type ConnectionOptions, type Connection } from './client.js'
// The file, its bundling and placing findings in it load the yaml package: push, lint and diff import them.
import type { DocumentFile } from './document-file.js'
import { endpoints, KINDS, type DocumentFormat, type Kind } from './endpoints.js'
import { FORMATS, renderReport, type Finding, type Format, type Report, type Severity } from './report.js'

interface RemoteOptions extends ConnectionOptions {
  kind: Kind
  format: Format
  output?: string
}

/*
 * What the CLI reads of the registry's answers. The typed client's answers are assigned to these, so
 * tsc checks that the registry's description (src/client/registry-api.ts) has every field read here.
 */

/** An API, schema or ruleset: the three kinds' objects all have these. */
interface Resource { id: string; slug: string; name: string; current: { number: number } | null }
interface Version {
  id: string; number: number; checksum: string; lint?: { counts: Record<Severity, number> } | null
  /** APIs: the file was a Swagger 2.0 document or a Postman collection, stored as its OpenAPI 3 conversion. */
  openapi?: string | null; converted_from?: ConvertedFrom | null
}
interface SentFinding { code: string; message: string; severity: Severity; path: (string | number)[] }
interface Change {
  pointer: string; classification: 'breaking' | 'non-breaking' | 'annotation'; check: string; message: string
  operation: { method: string; path: string } | null
}
interface DryRun {
  checksum: string
  unchanged: boolean
  findings: SentFinding[]
  diff?: { from: { number: number }; summary: { breaking: number; non_breaking: number; annotation: number }; changes: Change[]; total: number }
}

/** A registry's answer: `data` on success, `error` (problem+json, as far as it is one) otherwise. */
interface Answer<T> { data?: T; error?: unknown; response: Response }

/** Options every remote command takes: where the registry is and the key. */
function connection(command: Command): Command {
  return command
    .option('--url <url>', 'the registry (default: REGISTRY_URL, else what `registry login` saved)')
    .option('--key <key>', 'an API key (default: REGISTRY_API_KEY, else what `registry login` saved)')
    // Usage errors exit 2 (CI tells them from a blocked publish, which exits 1).
    .exitOverride((error) => process.exit(error.exitCode === 0 ? 0 : 2))
}

function kindOption(command: Command): Command {
  return command.addOption(new Option('--kind <kind>', 'what the resource is').choices(Object.keys(KINDS)).default('api'))
}

function reportOptions(command: Command): Command {
  return command
    .addOption(new Option('-f, --format <format>', 'how findings are printed').choices([...FORMATS]).default('stylish'))
    .option('-o, --output <file>', 'write the findings to this file (in --format) and print only the summary')
}

async function connected(options: ConnectionOptions): Promise<Connection> {
  return connect(await resolveCredentials(options))
}

async function findResource(connection: Connection, kind: Kind, ref: string): Promise<Resource | undefined> {
  const answer: Answer<{ data: Resource }> = await endpoints(connection.registry)[kind].read(ref)
  if (answer.data) return answer.data.data
  if (answer.response.status === 404 || answer.response.status === 400) return undefined
  throw unexpected(answer, `cannot read the ${KINDS[kind].label} '${ref}'`)
}

async function requireResource(connection: Connection, kind: Kind, ref: string): Promise<Resource> {
  const found = await findResource(connection, kind, ref)
  if (!found) throw usage(`no ${KINDS[kind].label} '${ref}' in this organization (${connection.url})`)
  return found
}

const SLUG = /^[a-z0-9]+(?:-[a-z0-9]+)*$/

async function createResource(connection: Connection, kind: Kind, ref: string): Promise<Resource> {
  if (!SLUG.test(ref)) throw usage(`--create needs a slug (lower-case letters and digits in hyphen-separated runs), not '${ref}'`)
  const answer: Answer<{ data: Resource }> = await endpoints(connection.registry)[kind].create({ name: ref, slug: ref })
  if (!answer.data || answer.response.status !== 201) throw unexpected(answer, `cannot create the ${KINDS[kind].label} '${ref}'`)
  return answer.data.data
}

/** Places the registry's findings (by path into the document) at their lines in the user's file. */
function place(document: DocumentFile, items: { code?: string; message: string; severity?: string; path?: (string | number)[]; pointer?: string }[], fallbackCode: string): Finding[] {
  const paths = items.map((item) => item.path ?? (item.pointer ? (pointerSegments(item.pointer) ?? []).map(unescapeSegment) : []))
  const positions = document.locate(paths)
  return items.map((item, i) => ({
    code: item.code ?? fallbackCode,
    message: item.message,
    severity: (item.severity as Severity | undefined) ?? 'error',
    path: paths[i],
    ...positions[i],
  }))
}

const CLASSES: Record<Change['classification'], Severity> = { breaking: 'error', 'non-breaking': 'info', annotation: 'hint' }

function changeFindings(document: DocumentFile, changes: Change[]): Finding[] {
  return place(document, changes.map((c) => ({
    code: c.check,
    message: `${c.classification}: ${c.operation ? `${c.operation.method.toUpperCase()} ${c.operation.path}: ` : ''}${c.message}`,
    severity: CLASSES[c.classification],
    pointer: c.pointer,
  })), 'change')
}

/** A 422 that refused the document (the lint or compatibility gate, an invalid document): its problem. */
function refusalOf(answer: Answer<unknown>): Problem | undefined {
  return answer.response.status === 422 ? problemOf(answer.error) : undefined
}

/** A refused document: the findings the problem lists, exit code 1. */
function refusal(document: DocumentFile, problem: Problem): Report {
  return {
    file: document.file,
    summary: `blocked: ${problem.detail}`,
    blocked: true,
    findings: place(document, problem.errors ?? [], problem.code),
    details: { status: problem.status, code: problem.code },
  }
}

async function emit(report: Report, options: RemoteOptions): Promise<void> {
  const format: Format = options.format
  const rendered = renderReport(report, format)
  if (options.output) {
    await writeFile(options.output, rendered)
    process.stdout.write(`${report.summary}\n`)
  } else process.stdout.write(rendered)
  if (report.blocked) process.exitCode = 1
}

async function send(connection: Connection, kind: Kind, resource: Resource, document: DocumentFile, dryRun: boolean): Promise<Answer<{ data: Version | DryRun }>> {
  return endpoints(connection.registry)[kind].upload(resource.id, document.sent, dryRun)
}

async function push(ref: string, file: string, options: RemoteOptions & { create?: boolean }): Promise<void> {
  const connection = await connected(options)
  const { kind } = options
  const { readDocumentFile } = await import('./document-file.js')
  const document = await readDocumentFile(file, kind === 'api')
  let resource = await findResource(connection, kind, ref)
  if (!resource) {
    if (!options.create) throw usage(`no ${KINDS[kind].label} '${ref}' in this organization (${connection.url}): pass --create to make it`)
    resource = await createResource(connection, kind, ref)
  }
  const answer = await send(connection, kind, resource, document, false)
  const refused = refusalOf(answer)
  if (refused) return emit(refusal(document, refused), options)
  // A publish answers the version (201 new, 200 unchanged); a dry run's answer here would be a registry bug.
  const version = answer.data?.data
  if (!version || !('id' in version)) throw unexpected(answer, `cannot push ${file}`)
  let findings: Finding[] = []
  const counts = version.lint?.counts
  const listFindings = endpoints(connection.registry)[kind].findings
  if (listFindings && counts && Object.values(counts).some((n) => n > 0)) {
    const listed: Answer<{ data: SentFinding[] }> = await listFindings(resource.id, version.id)
    if (listed.data) findings = place(document, listed.data.data, 'finding')
  }
  // The registry converted the file: its findings are about the conversion, placed where the file has
  // the same path (paths and operations), else at the deepest part of the path it has.
  const converted = version.converted_from ? ` (converted from ${CONVERTED_FROM_NAMES[version.converted_from]} to OpenAPI ${version.openapi ?? '3'})` : ''
  const summary = answer.response.status === 201
    ? `published ${resource.slug} v${version.number} (${version.checksum})${converted}`
    : `unchanged: ${resource.slug} v${version.number} is this document already${converted}`
  await emit({ file, summary, blocked: false, findings, details: { version, bundled: document.bundled } }, options)
}

/** A dry run of the file against the resource: what the registry would do with it, or its refusal. */
async function dryRun(connection: Connection, kind: Kind, ref: string, file: string): Promise<{ document: DocumentFile; result: DryRun | Problem }> {
  const { readDocumentFile } = await import('./document-file.js')
  const document = await readDocumentFile(file, kind === 'api')
  const resource = await requireResource(connection, kind, ref)
  const answer = await send(connection, kind, resource, document, true)
  const refused = refusalOf(answer)
  if (refused) return { document, result: refused }
  const result = answer.data?.data
  if (answer.response.status !== 200 || !result || !('unchanged' in result)) throw unexpected(answer, `cannot check ${file}`)
  return { document, result }
}

async function lint(file: string, options: RemoteOptions & { api?: string; schema?: string; ruleset?: string }): Promise<void> {
  const targets = (['api', 'schema', 'ruleset'] as const).filter((k) => options[k] !== undefined)
  if (targets.length !== 1) throw usage('lint needs one of --api <api>, --schema <schema> or --ruleset <ruleset>: its ruleset, threshold and checks apply')
  const kind = targets[0]
  const connection = await connected(options)
  const { document, result } = await dryRun(connection, kind, options[kind]!, file)
  if (!('unchanged' in result)) return emit(refusal(document, result), options)
  const findings = place(document, result.findings, 'finding')
  const summary = result.unchanged ? 'clean: the document is the current version' : `clean: ${findings.length} finding${findings.length === 1 ? '' : 's'} below the blocking threshold; nothing was stored`
  await emit({ file, summary, blocked: false, findings, details: { checksum: result.checksum, unchanged: result.unchanged } }, options)
}

async function diff(ref: string, file: string, options: RemoteOptions & { failOnBreaking?: boolean }): Promise<void> {
  const connection = await connected(options)
  const { document, result } = await dryRun(connection, options.kind, ref, file)
  if (!('unchanged' in result)) return emit(refusal(document, result), options)
  if (!result.diff) {
    const summary = result.unchanged ? 'no changes: the document is the current version' : 'no current version to compare with'
    return emit({ file, summary, blocked: false, findings: [], details: { checksum: result.checksum, unchanged: result.unchanged } }, options)
  }
  const { from, summary: counts, changes, total } = result.diff
  const blocked = Boolean(options.failOnBreaking) && counts.breaking > 0
  const more = total > changes.length ? ` (the first ${changes.length} of ${total} listed)` : ''
  const summary = `${blocked ? 'blocked: ' : ''}against v${from.number}: ${counts.breaking} breaking, ${counts.non_breaking} non-breaking, ${counts.annotation} annotation changes${more}; nothing was stored`
  await emit({ file, summary, blocked, findings: changeFindings(document, changes), details: { diff: result.diff } }, options)
}

async function pull(ref: string, options: ConnectionOptions & { kind: Kind; version?: string; format: DocumentFormat; output?: string }): Promise<void> {
  const connection = await connected(options)
  if (options.version !== undefined && !/^[1-9][0-9]{0,14}$/.test(options.version)) throw usage(`--version takes a version number, not '${options.version}'`)
  const calls = endpoints(connection.registry)[options.kind]
  const answer: Answer<string> = options.version ? await calls.version(ref, options.version, options.format) : await calls.current(ref, options.format)
  if (answer.response.status === 404) {
    throw usage(`no ${options.version ? `version ${options.version} of the` : 'current document of the'} ${KINDS[options.kind].label} '${ref}' in this organization`)
  }
  if (answer.response.status !== 200 || answer.data === undefined) throw unexpected(answer, `cannot pull '${ref}'`)
  const text = answer.data.endsWith('\n') ? answer.data : `${answer.data}\n`
  if (options.output) await writeFile(options.output, text)
  else process.stdout.write(text)
}

async function list(options: ConnectionOptions & { kind: Kind; json?: boolean }): Promise<void> {
  const connection = await connected(options)
  const all: Resource[] = []
  for (let page = 1; ; page++) {
    const answer: Answer<{ data: Resource[]; total: number }> = await endpoints(connection.registry)[options.kind].list(page)
    if (!answer.data) throw unexpected(answer, `cannot list ${KINDS[options.kind].plural}`)
    all.push(...answer.data.data)
    if (answer.data.data.length === 0 || all.length >= answer.data.total) break
  }
  if (options.json) process.stdout.write(`${JSON.stringify({ data: all }, null, 2)}\n`)
  else process.stdout.write(all.map((r) => `${r.slug}\t${r.id}\t${r.current ? `v${r.current.number}` : '-'}\t${r.name}\n`).join(''))
}

async function restore(ref: string, version: string, options: ConnectionOptions & { kind: Kind; json?: boolean }): Promise<void> {
  const connection = await connected(options)
  if (!/^[1-9][0-9]{0,14}$/.test(version) && !/^[0-9A-HJKMNP-TV-Z]{26}$/.test(version)) throw usage(`restore takes a version number or id, not '${version}'`)
  const answer: Answer<{ data: Version }> = await endpoints(connection.registry)[options.kind].restore(ref, version)
  if (answer.response.status === 404) throw usage(`no version ${version} of the ${KINDS[options.kind].label} '${ref}' in this organization`)
  const refused = refusalOf(answer)
  if (refused) {
    process.stderr.write(`registry: blocked: ${refused.detail}\n`)
    for (const item of refused.errors ?? []) process.stderr.write(`  ${item.code ?? ''} ${item.message}\n`)
    process.exitCode = 1
    return
  }
  if (!answer.data) throw unexpected(answer, `cannot restore version ${version}`)
  const restored = answer.data.data
  if (options.json) process.stdout.write(`${JSON.stringify({ data: restored }, null, 2)}\n`)
  else process.stdout.write(answer.response.status === 201 ? `restored version ${version} as v${restored.number}\n` : `version ${version} is current already (v${restored.number})\n`)
}

async function login(options: ConnectionOptions): Promise<void> {
  const url = options.url || process.env.REGISTRY_URL
  const key = options.key || process.env.REGISTRY_API_KEY
  if (!url || !key) throw usage('login needs --url and --key (or REGISTRY_URL and REGISTRY_API_KEY)')
  const connection = connect({ url: checkedUrl(url), key })
  // A 401 throws: a wrong key is never saved.
  const answer = await connection.registry.GET('/v1/apis', { params: { query: { limit: 1 } } })
  if (!answer.data) throw unexpected(answer, 'cannot check the key')
  const file = await saveCredentials({ url: connection.url, key })
  process.stdout.write(`logged in to ${connection.url}; the URL and key are in ${file} (mode 0600)\n`)
}

/** Passes --json (the CLI's global option) on as what the commands read. */
type Globals = () => { json?: boolean }

/** The commands that talk to a running registry over HTTP (docs/ci.md). */
export function registerRemoteCommands(program: Command, globals: Globals): void {
  const withJson = <T extends object>(options: T) => ({ ...options, json: globals().json })
  const findingsFormat = <T extends RemoteOptions>(options: T): T => (globals().json ? { ...options, format: 'json' } : options)

  connection(reportOptions(kindOption(program.command('push <ref> <file>'))))
    .description('upload a document as a new version of an API (or --kind schema / ruleset), by slug or id; exits 1 when lint or compatibility blocks it')
    .option('--create', 'create the resource (with <ref> as its slug and name) when it does not exist')
    .action((ref: string, file: string, options: RemoteOptions & { create?: boolean }) => push(ref, file, findingsFormat(options)))

  connection(reportOptions(program.command('lint <file>')))
    .description("dry run: validate and lint a document with an API's ruleset and threshold (or a schema's or ruleset's checks); nothing is stored")
    .option('--api <api>', 'the API (slug or id) whose ruleset, threshold and compatibility apply')
    .option('--schema <schema>', 'the JSON Schema (slug or id) to check the document as')
    .option('--ruleset <ruleset>', 'the ruleset (slug or id) to check the document as')
    .action((file: string, options: RemoteOptions & { api?: string; schema?: string; ruleset?: string }) => lint(file, findingsFormat({ ...options, kind: 'api' })))

  connection(reportOptions(program.command('diff <ref> <file>')))
    .addOption(new Option('--kind <kind>', 'what the resource is').choices(['api', 'schema']).default('api'))
    .description("dry run: the changes from the current version to a document, and the compatibility gate's verdict; nothing is stored")
    .option('--fail-on-breaking', 'exit 1 on any breaking change, even when the compatibility policy allows it')
    .action((ref: string, file: string, options: RemoteOptions & { failOnBreaking?: boolean }) => diff(ref, file, findingsFormat(options)))

  connection(kindOption(program.command('pull <ref>')))
    .description('print (or write) the current document, or a version of it')
    .option('--version <n>', 'a version number (default: the current version)')
    .addOption(new Option('--format <format>', 'the document format').choices(['json', 'yaml']).default('json'))
    .option('-o, --output <file>', 'write the document to this file')
    .action((ref: string, options: ConnectionOptions & { kind: Kind; version?: string; format: DocumentFormat; output?: string }) => pull(ref, options))

  connection(kindOption(program.command('list')))
    .description("list the organization's APIs (or --kind schema / ruleset): slug, id, current version, name")
    .action((options: ConnectionOptions & { kind: Kind }) => list(withJson(options)))

  connection(kindOption(program.command('restore <ref> <version>')))
    .description('make a previous version current again (a new version); exits 1 when compatibility blocks it')
    .action((ref: string, version: string, options: ConnectionOptions & { kind: Kind }) => restore(ref, version, withJson(options)))

  connection(program.command('login'))
    .description("check a registry URL and key and save them in the user's configuration directory (mode 0600)")
    .action((options: ConnectionOptions) => login(options))

  connection(program.command('logout'))
    .description('forget the URL and key `registry login` saved')
    .action(async () => { process.stdout.write(`removed ${await forgetCredentials()}\n`) })
}
