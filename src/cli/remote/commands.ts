import { writeFile } from 'node:fs/promises'
import { Command, Option } from 'commander'
import { CONVERTED_FROM_NAMES, type ConvertedFrom } from '../../documents/import-formats.js'
import { pointerSegments, unescapeSegment } from '../../documents/pointer.js'
import { checkedUrl, forgetCredentials, RegistryClient, resolveCredentials, saveCredentials, unexpected, usage, type Answer, type ConnectionOptions, type Problem } from './client.js'
// The file, its bundling and placing findings in it load the yaml package: push, lint and diff import them.
import type { DocumentFile } from './document-file.js'
import { FORMATS, renderReport, type Finding, type Format, type Report, type Severity } from './report.js'

/** The three kinds of resource, as the HTTP API names them. */
const KINDS = {
  api: { plural: 'apis', document: 'spec', label: 'API' },
  schema: { plural: 'schemas', document: 'document', label: 'schema' },
  ruleset: { plural: 'rulesets', document: 'document', label: 'ruleset' },
} as const
type Kind = keyof typeof KINDS

interface RemoteOptions extends ConnectionOptions {
  kind: Kind
  format: Format
  output?: string
}

interface Version {
  id: string; number: number; checksum: string; lint?: { counts: Record<Severity, number> } | null
  /** APIs: the file was a Swagger 2.0 document or a Postman collection, stored as its OpenAPI 3 conversion. */
  openapi?: string | null; converted_from?: ConvertedFrom | null
}
interface Resource { id: string; slug: string; name: string; current: Version | null }
interface DryRun {
  checksum: string
  unchanged: boolean
  findings: Omit<Finding, 'line' | 'column'>[]
  diff?: { from: Version; summary: { breaking: number; non_breaking: number; annotation: number }; changes: Change[]; total: number }
}
interface Change { kind: string; pointer: string; classification: 'breaking' | 'non-breaking' | 'annotation'; check: string; message: string; operation: { method: string; path: string } | null }

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

async function clientOf(options: ConnectionOptions): Promise<RegistryClient> {
  return new RegistryClient(await resolveCredentials(options))
}

const resourcePath = (kind: Kind, ref: string) => `/v1/${KINDS[kind].plural}/${encodeURIComponent(ref)}`

async function findResource(client: RegistryClient, kind: Kind, ref: string): Promise<Resource | undefined> {
  const answer = await client.request<{ data: Resource }>('GET', resourcePath(kind, ref))
  if (answer.status === 200) return answer.body.data
  if (answer.status === 404 || answer.status === 400) return undefined
  throw unexpected(answer, `cannot read the ${KINDS[kind].label} '${ref}'`)
}

async function requireResource(client: RegistryClient, kind: Kind, ref: string): Promise<Resource> {
  const found = await findResource(client, kind, ref)
  if (!found) throw usage(`no ${KINDS[kind].label} '${ref}' in this organization (${client.url})`)
  return found
}

const SLUG = /^[a-z0-9]+(?:-[a-z0-9]+)*$/

async function createResource(client: RegistryClient, kind: Kind, ref: string): Promise<Resource> {
  if (!SLUG.test(ref)) throw usage(`--create needs a slug (lower-case letters and digits in hyphen-separated runs), not '${ref}'`)
  const answer = await client.request<{ data: Resource }>('POST', `/v1/${KINDS[kind].plural}`, { body: { name: ref, slug: ref } })
  if (answer.status !== 201) throw unexpected(answer, `cannot create the ${KINDS[kind].label} '${ref}'`)
  return answer.body.data
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

/** A 422 that refused the document: the findings it lists, exit code 1. */
function refusal(document: DocumentFile, answer: Answer<Problem>): Report {
  const problem = answer.body
  return {
    file: document.file,
    summary: `blocked: ${problem.detail}`,
    blocked: true,
    findings: place(document, problem.errors ?? [], problem.code),
    details: { status: answer.status, code: problem.code },
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

function uploadPath(kind: Kind, resource: Resource, dryRun: boolean): string {
  return `${resourcePath(kind, resource.id)}/${KINDS[kind].document}${dryRun ? '?dry_run=true' : ''}`
}

async function send(client: RegistryClient, kind: Kind, resource: Resource, document: DocumentFile, dryRun: boolean) {
  // The text as written, in the JSON envelope: the registry reads JSON or YAML from it alike.
  return client.request<{ data: Version & DryRun } & Problem>('POST', uploadPath(kind, resource, dryRun), { body: { document: document.sent } })
}

function isRefusal(answer: Answer<unknown>): boolean {
  return answer.status === 422 && typeof answer.body === 'object' && answer.body !== null && 'code' in answer.body
}

async function push(ref: string, file: string, options: RemoteOptions & { create?: boolean }): Promise<void> {
  const client = await clientOf(options)
  const { kind } = options
  const { readDocumentFile } = await import('./document-file.js')
  const document = await readDocumentFile(file, kind === 'api')
  let resource = await findResource(client, kind, ref)
  if (!resource) {
    if (!options.create) throw usage(`no ${KINDS[kind].label} '${ref}' in this organization (${client.url}): pass --create to make it`)
    resource = await createResource(client, kind, ref)
  }
  const answer = await send(client, kind, resource, document, false)
  if (isRefusal(answer)) return emit(refusal(document, answer as Answer<Problem>), options)
  if (answer.status !== 200 && answer.status !== 201) throw unexpected(answer, `cannot push ${file}`)
  const version = answer.body.data
  let findings: Finding[] = []
  const counts = version.lint?.counts
  if (counts && Object.values(counts).some((n) => Number(n) > 0)) {
    const listed = await client.request<{ data: Finding[] }>('GET', `${resourcePath(kind, resource.id)}/versions/${version.id}/findings`)
    if (listed.status === 200) findings = place(document, listed.body.data, 'finding')
  }
  // The registry converted the file: its findings are about the conversion, placed where the file has
  // the same path (paths and operations), else at the deepest part of the path it has.
  const converted = version.converted_from ? ` (converted from ${CONVERTED_FROM_NAMES[version.converted_from]} to OpenAPI ${version.openapi ?? '3'})` : ''
  const summary = answer.status === 201
    ? `published ${resource.slug} v${version.number} (${version.checksum})${converted}`
    : `unchanged: ${resource.slug} v${version.number} is this document already${converted}`
  await emit({ file, summary, blocked: false, findings, details: { version, bundled: document.bundled } }, options)
}

async function dryRun(client: RegistryClient, kind: Kind, ref: string, file: string): Promise<{ document: DocumentFile; answer: Answer<{ data: DryRun } & Problem> }> {
  const { readDocumentFile } = await import('./document-file.js')
  const document = await readDocumentFile(file, kind === 'api')
  const resource = await requireResource(client, kind, ref)
  const answer = await send(client, kind, resource, document, true) as Answer<{ data: DryRun } & Problem>
  if (answer.status !== 200 && !isRefusal(answer)) throw unexpected(answer, `cannot check ${file}`)
  return { document, answer }
}

async function lint(file: string, options: RemoteOptions & { api?: string; schema?: string; ruleset?: string }): Promise<void> {
  const targets = (['api', 'schema', 'ruleset'] as const).filter((k) => options[k] !== undefined)
  if (targets.length !== 1) throw usage('lint needs one of --api <api>, --schema <schema> or --ruleset <ruleset>: its ruleset, threshold and checks apply')
  const kind = targets[0]
  const client = await clientOf(options)
  const { document, answer } = await dryRun(client, kind, options[kind]!, file)
  if (isRefusal(answer)) return emit(refusal(document, answer as Answer<Problem>), options)
  const result = answer.body.data
  const findings = place(document, result.findings, 'finding')
  const summary = result.unchanged ? 'clean: the document is the current version' : `clean: ${findings.length} finding${findings.length === 1 ? '' : 's'} below the blocking threshold; nothing was stored`
  await emit({ file, summary, blocked: false, findings, details: { checksum: result.checksum, unchanged: result.unchanged } }, options)
}

async function diff(ref: string, file: string, options: RemoteOptions & { failOnBreaking?: boolean }): Promise<void> {
  const client = await clientOf(options)
  const { document, answer } = await dryRun(client, options.kind, ref, file)
  if (isRefusal(answer)) return emit(refusal(document, answer as Answer<Problem>), options)
  const result = answer.body.data
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

async function pull(ref: string, options: ConnectionOptions & { kind: Kind; version?: string; format?: string; output?: string }): Promise<void> {
  const client = await clientOf(options)
  if (options.version !== undefined && !/^[1-9][0-9]{0,14}$/.test(options.version)) throw usage(`--version takes a version number, not '${options.version}'`)
  const base = resourcePath(options.kind, ref)
  const path = options.version ? `${base}/versions/${options.version}/document` : `${base}/${KINDS[options.kind].document}`
  const answer = await client.request<string | Problem>('GET', `${path}?format=${options.format}`, { accept: '*/*' })
  if (answer.status === 404) {
    throw usage(`no ${options.version ? `version ${options.version} of the` : 'current document of the'} ${KINDS[options.kind].label} '${ref}' in this organization`)
  }
  if (answer.status !== 200) throw unexpected(answer, `cannot pull '${ref}'`)
  const text = answer.text.endsWith('\n') ? answer.text : `${answer.text}\n`
  if (options.output) await writeFile(options.output, text)
  else process.stdout.write(text)
}

async function list(options: ConnectionOptions & { kind: Kind; json?: boolean }): Promise<void> {
  const client = await clientOf(options)
  const all: Resource[] = []
  for (let page = 1; ; page++) {
    const answer = await client.request<{ data: Resource[]; total: number }>('GET', `/v1/${KINDS[options.kind].plural}?limit=100&page=${page}`)
    if (answer.status !== 200) throw unexpected(answer, `cannot list ${KINDS[options.kind].plural}`)
    all.push(...answer.body.data)
    if (answer.body.data.length === 0 || all.length >= answer.body.total) break
  }
  if (options.json) process.stdout.write(`${JSON.stringify({ data: all }, null, 2)}\n`)
  else process.stdout.write(all.map((r) => `${r.slug}\t${r.id}\t${r.current ? `v${r.current.number}` : '-'}\t${r.name}\n`).join(''))
}

async function restore(ref: string, version: string, options: ConnectionOptions & { kind: Kind; json?: boolean }): Promise<void> {
  const client = await clientOf(options)
  if (!/^[1-9][0-9]{0,14}$/.test(version) && !/^[0-9A-HJKMNP-TV-Z]{26}$/.test(version)) throw usage(`restore takes a version number or id, not '${version}'`)
  const answer = await client.request<{ data: Version } & Problem>('POST', `${resourcePath(options.kind, ref)}/versions/${version}/restore`)
  if (answer.status === 404) throw usage(`no version ${version} of the ${KINDS[options.kind].label} '${ref}' in this organization`)
  if (isRefusal(answer)) {
    process.stderr.write(`registry: blocked: ${answer.body.detail}\n`)
    for (const item of (answer.body as Problem).errors ?? []) process.stderr.write(`  ${item.code ?? ''} ${item.message}\n`)
    process.exitCode = 1
    return
  }
  if (answer.status !== 200 && answer.status !== 201) throw unexpected(answer, `cannot restore version ${version}`)
  const restored = answer.body.data
  if (options.json) process.stdout.write(`${JSON.stringify({ data: restored }, null, 2)}\n`)
  else process.stdout.write(answer.status === 201 ? `restored version ${version} as v${restored.number}\n` : `version ${version} is current already (v${restored.number})\n`)
}

async function login(options: ConnectionOptions): Promise<void> {
  const url = options.url || process.env.REGISTRY_URL
  const key = options.key || process.env.REGISTRY_API_KEY
  if (!url || !key) throw usage('login needs --url and --key (or REGISTRY_URL and REGISTRY_API_KEY)')
  const client = new RegistryClient({ url: checkedUrl(url), key })
  const answer = await client.request('GET', '/v1/apis?limit=1') // a 401 throws: a wrong key is never saved
  if (answer.status !== 200) throw unexpected(answer, 'cannot check the key')
  const file = await saveCredentials({ url: client.url, key })
  process.stdout.write(`logged in to ${client.url}; the URL and key are in ${file} (mode 0600)\n`)
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
    .action((ref: string, options: ConnectionOptions & { kind: Kind; version?: string; format?: string; output?: string }) => pull(ref, options))

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
