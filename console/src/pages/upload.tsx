/**
 * Upload a document: drop, choose or paste it; the console checks it with a dry run first (validation,
 * and for APIs the lint gate), shows the findings with their paths and lines and whether they block,
 * and publishes only what passed.
 */
import { useState } from 'preact/hooks'
import { api, ApiError } from '../api'
import { Notice, Panel, ProblemNotice } from '../components'
import { FindingsTable } from '../findings'
import { useAction } from '../hooks'
import { apiPath, KINDS, resourcePath, type KindInfo } from '../kinds'
import { useCan } from '../session'
import type { Finding, Resource, Version } from '../types'
import { ResourceFrame } from './resource'

/** The outcome of the last check, for the text it checked. */
type Checked =
  | { text: string; ok: true; unchanged: boolean; findings: Finding[] }
  | { text: string; ok: false; error: ApiError }

const MAX_FILE_BYTES = 64 * 1024 * 1024

export function Upload(props: { plural: KindInfo['plural']; id: string }) {
  const info = KINDS[props.plural]
  return <ResourceFrame {...props} title="Upload">{(resource, reload) => <UploadForm info={info} resource={resource} reload={reload} />}</ResourceFrame>
}

function UploadForm(props: { info: KindInfo; resource: Resource; reload: () => void }) {
  const { info, resource } = props
  const canWrite = useCan('write')
  const [text, setText] = useState('')
  const [fileNote, setFileNote] = useState<string | undefined>()
  const [over, setOver] = useState(false)
  const [checked, setChecked] = useState<Checked | undefined>()
  const [published, setPublished] = useState<{ version: Version; created: boolean } | undefined>()
  const check = useAction()
  const publish = useAction()
  const documentUrl = apiPath(info, resource.id, `/${info.documentPath}`)

  const readFile = async (file: File | undefined) => {
    if (!file) return
    if (file.size > MAX_FILE_BYTES) return setFileNote(`${file.name} is larger than 64 MB`)
    setText(await file.text())
    setFileNote(`${file.name} (${file.size.toLocaleString()} bytes)`)
    setChecked(undefined)
  }

  const load = useAction()
  const loadCurrent = () => load.run(async () => {
    const format = resource.current?.format ?? 'json'
    const body = await api.text(documentUrl, { format }, format === 'yaml' ? 'application/yaml' : 'application/json')
    setText(format === 'json' ? JSON.stringify(JSON.parse(body), null, 2) : body)
    setFileNote(undefined)
    setChecked(undefined)
  })

  const runCheck = async (event?: Event) => {
    event?.preventDefault()
    setPublished(undefined)
    const checkedText = text
    const answer = await check.run(async () => {
      try {
        const result = await api.post<{ data: { unchanged: boolean; findings: Finding[] } }>(documentUrl, { document: checkedText }, { dry_run: true })
        return { text: checkedText, ok: true as const, ...result.data }
      } catch (error) {
        // A refused document is an answer to show, not a failure of the check.
        if (error instanceof ApiError && error.status === 422) return { text: checkedText, ok: false as const, error }
        throw error
      }
    })
    if (answer) setChecked(answer)
  }

  const runPublish = async () => {
    const publishedText = text
    const outcome = await publish.run(async () => {
      try {
        return { version: (await api.post<{ data: Version }>(documentUrl, { document: publishedText })).data }
      } catch (error) {
        // Refused at publish (the ruleset changed since the check, say): shown like a check's answer.
        if (error instanceof ApiError && error.status === 422) return { refused: error }
        throw error
      }
    })
    if (!outcome) return
    if (outcome.refused) return setChecked({ text: publishedText, ok: false, error: outcome.refused })
    if (!outcome.version) return
    setPublished({ version: outcome.version, created: outcome.version.id !== resource.current?.id })
    setChecked(undefined)
    props.reload()
  }

  if (!canWrite) return <Notice kind="info">Your key can only read: uploading needs a write or admin key.</Notice>

  const passed = checked?.ok === true && checked.text === text
  const stale = checked !== undefined && checked.text !== text
  const threshold = info.kind === 'api' ? resource.effective_blocking_severity : undefined

  return (
    <>
      {published && (
        <Notice kind="ok">
          {published.created ? <>Published version #{published.version.number}.</> : <>The content is the current version’s: nothing new was stored.</>}
          {' '}<a href={resourcePath(info, resource.slug, '/versions')}>See the versions</a>
        </Notice>
      )}
      <Panel title="Document" description={info.kind === 'api' ? 'An OpenAPI 3.0 or 3.1 document in YAML or JSON.' : info.kind === 'schema' ? 'A JSON Schema in JSON or YAML.' : 'A Spectral ruleset in YAML or JSON.'}>
        <form class="stack" onSubmit={runCheck}
          onDragOver={(e) => { e.preventDefault(); setOver(true) }}
          onDragLeave={() => setOver(false)}
          onDrop={(e) => { e.preventDefault(); setOver(false); void readFile(e.dataTransfer?.files[0]) }}>
          <div class={`dropzone ${over ? 'over' : ''}`}>
            <label for="document-file">Drop a file here, or choose one: </label>
            <input id="document-file" type="file" accept=".json,.yaml,.yml,application/json,application/yaml,text/yaml"
              onChange={(e) => void readFile((e.target as HTMLInputElement).files?.[0])} />
            {fileNote && <p class="small">Loaded {fileNote}</p>}
          </div>
          {resource.current && (
            <p class="small">Or <button type="button" class="link" disabled={load.busy} onClick={() => void loadCurrent()}>start from the current version (#{resource.current.number})</button> and edit it.</p>
          )}
          <ProblemNotice error={load.error} />
          <div class="field">
            <label for="document-text">Or paste it</label>
            <textarea id="document-text" class="code" spellcheck={false} value={text}
              onInput={(e) => { setText((e.target as HTMLTextAreaElement).value); setPublished(undefined) }} />
          </div>
          <div class="form-actions">
            <button type="submit" class={passed ? '' : 'primary'} disabled={check.busy || text.trim() === ''}>{check.busy ? 'Checking…' : 'Check (dry run)'}</button>
            <button type="button" class={passed ? 'primary' : ''} disabled={!passed || publish.busy} onClick={() => void runPublish()}
              aria-describedby="publish-hint">{publish.busy ? 'Publishing…' : 'Publish'}</button>
            <span class="muted small" id="publish-hint">{passed ? 'The check passed: publish makes it the current version.' : 'Publishing is offered once a check of this text passes.'}</span>
          </div>
        </form>
      </Panel>
      <ProblemNotice error={check.error ?? publish.error} />
      {stale && <Notice kind="warn">The text changed since the last check: check it again.</Notice>}
      {checked && !stale && <CheckResult checked={checked} info={info} threshold={threshold} />}
    </>
  )
}

function CheckResult(props: { checked: Checked; info: KindInfo; threshold: Resource['effective_blocking_severity'] }) {
  const { checked } = props
  if (checked.ok) {
    return (
      <Panel title="Check passed" id="check-result" description={checked.unchanged ? 'The content is the same as the current version’s: publishing stores nothing.' : undefined}>
        <Notice kind="ok">
          {checked.findings.length === 0 ? 'Valid, with no lint findings.' : `Valid. ${checked.findings.length} finding${checked.findings.length === 1 ? '' : 's'}, none at or above the blocking threshold (${props.threshold ?? 'off'}).`}
        </Notice>
        <FindingsTable items={checked.findings} text={checked.text} threshold={props.threshold} caption="Lint findings" />
      </Panel>
    )
  }
  const { problem } = checked.error
  const items = problem.errors ?? []
  const invalid = problem.code !== 'lint_blocked'
  return (
    <Panel title={invalid ? 'The document was refused' : 'Lint findings block this publish'} id="check-result">
      <div class="notice error" role="alert">
        <strong>{problem.status} {problem.code}</strong>
        <p>{problem.detail}</p>
      </div>
      <FindingsTable items={items} text={checked.text} threshold={props.threshold} invalid={invalid} caption={invalid ? 'Problems' : 'Blocking findings'} />
    </Panel>
  )
}
