/**
 * A ruleset's document in a code editor that validates as you type (syntax at once, then the
 * registry's own validation by a dry run), and "lint an API with this ruleset" before attaching it.
 */
import { lazy } from 'preact-iso'
import { useEffect, useRef, useState } from 'preact/hooks'
import { api, ApiError } from '../api'
import { Badge, Loading, Notice, Panel, ProblemNotice } from '../components'
import type { Diagnostic } from '../editor'
import { FindingsTable } from '../findings'
import { useAction } from '../hooks'
import { ApiPicker } from '../pickers'
import { useCan } from '../session'
import type { Finding, Resource, Version } from '../types'
import { ResourceFrame } from './resource'

const CodeEditor = lazy(() => import('../editor'))

export function RulesetEditor(props: { plural: 'rulesets'; id: string }) {
  return <ResourceFrame {...props} title="Editor">{(resource, reload) => <EditorPanels ruleset={resource} reload={reload} />}</ResourceFrame>
}

type Validity = { state: 'checking' } | { state: 'valid' } | { state: 'invalid'; count: number }

function EditorPanels(props: { ruleset: Resource; reload: () => void }) {
  const { ruleset } = props
  const canWrite = useCan('write')
  const [saved, setSaved] = useState<string | undefined>()
  const [text, setText] = useState<string | undefined>()
  // Each load of the saved document starts the editor afresh with it (the editor owns its text).
  const [loads, setLoads] = useState(0)
  const [message, setMessage] = useState<string | undefined>()
  const [validity, setValidity] = useState<Validity | undefined>()
  const latestCheck = useRef(0)
  const load = useAction()
  const save = useAction()
  const documentUrl = `/v1/rulesets/${ruleset.id}/document`

  useEffect(() => {
    const format = ruleset.current?.format ?? 'yaml'
    void load.run(async () => {
      const body = await api.text(documentUrl, { format }, format === 'yaml' ? 'application/yaml' : 'application/json')
      // JSON is shown indented (the same content: saving it unchanged makes no version).
      const shown = format === 'json' ? JSON.stringify(JSON.parse(body), null, 2) : body
      setSaved(shown)
      setText(shown)
      setLoads((n) => n + 1)
    })
  }, [ruleset.current?.id])

  /** Syntax errors from the text itself; when there are none, the registry's validation (a dry run). */
  const check = async (candidate: string): Promise<Diagnostic[]> => {
    // Checks answer out of order when typing is fast: only the latest text's answer is shown.
    const checkNumber = ++latestCheck.current
    setValidity({ state: 'checking' })
    const { locate } = await import('../positions')
    const located = locate(candidate)
    let diagnostics: Diagnostic[] = located.syntaxErrors.map((e) => ({ ...e, severity: 'error' }))
    if (diagnostics.length === 0 && candidate.trim() !== '') {
      try {
        await api.post(documentUrl, { document: candidate }, { dry_run: true })
      } catch (error) {
        if (!(error instanceof ApiError) || error.status !== 422) throw error
        const items = error.problem.errors?.length ? error.problem.errors : [{ message: error.problem.detail, path: [] }]
        diagnostics = items.map((item) => {
          const position = located.position(item.path ?? [])
          return { from: position?.from ?? 0, to: position?.to ?? 0, severity: 'error', message: item.message }
        })
      }
    }
    if (checkNumber === latestCheck.current) setValidity(diagnostics.length === 0 ? { state: 'valid' } : { state: 'invalid', count: diagnostics.length })
    return diagnostics
  }

  const submit = async () => {
    setMessage(undefined)
    const answer = await save.run(() => api.post<{ data: Version }>(documentUrl, { document: text }))
    if (answer) {
      setMessage(answer.data.id === ruleset.current?.id ? 'Unchanged: the ruleset is already this.' : `Saved as version #${answer.data.number}.`)
      setSaved(text)
      props.reload()
    }
  }

  return (
    <>
      <Panel title="Ruleset document" id="ruleset-document"
        description="YAML or JSON. extends may name spectral:oas, spectral:asyncapi or spectral:arazzo; rules may use Spectral’s core functions."
        actions={canWrite && <button type="button" class="primary" disabled={save.busy || text === undefined || text === saved || validity?.state === 'invalid'} onClick={() => void submit()}>Save as new version</button>}>
        {message && <Notice kind="ok">{message}</Notice>}
        <ProblemNotice error={load.error ?? save.error} />
        {text === undefined ? <Loading /> : <CodeEditor key={loads} value={text} onChange={setText} label="Ruleset document" check={check} />}
        <p class={`status-line ${validity?.state === 'invalid' ? 'bad' : validity?.state === 'valid' ? 'good' : ''}`} role="status">
          {validity?.state === 'checking' ? 'Checking…'
            : validity?.state === 'valid' ? 'Valid ruleset.'
            : validity?.state === 'invalid' ? `${validity.count} problem${validity.count === 1 ? '' : 's'}: see the marked lines.` : ''}
          {text !== undefined && text !== saved ? ' Unsaved changes.' : ''}
        </p>
      </Panel>
      <LintAnApi ruleset={ruleset} canWrite={canWrite} />
    </>
  )
}

/** Lints an API's current document with the ruleset's saved version, then offers to attach it. */
function LintAnApi(props: { ruleset: Resource; canWrite: boolean }) {
  const { ruleset } = props
  const [target, setTarget] = useState<Resource | undefined>()
  const [result, setResult] = useState<{ text: string; findings: Finding[]; counts: Record<string, number> } | undefined>()
  const [attached, setAttached] = useState(false)
  const lint = useAction()
  const attach = useAction()

  const run = async (chosen: Resource) => {
    setTarget(chosen)
    setResult(undefined)
    setAttached(false)
    await lint.run(async () => {
      // The document as it was uploaded (its own format and lines), so the findings' lines are its lines.
      const format = chosen.current?.format ?? 'json'
      const text = await api.text(`/v1/apis/${chosen.id}/spec`, { format }, format === 'yaml' ? 'application/yaml' : 'application/json')
      const answer = await api.post<{ data: { findings: Finding[]; counts: Record<string, number> } }>(`/v1/rulesets/${ruleset.id}/lint`, { document: text })
      setResult({ text, ...answer.data })
    })
  }

  return (
    <Panel title="Lint an API with this ruleset" id="lint-api" description="Runs the saved version of this ruleset on an API’s current document; nothing is stored.">
      <ApiPicker id="lint-api-search" label="API to lint" action="Lint" onPick={(chosen) => void run(chosen)} />
      {target && !target.current && <Notice kind="warn">{target.name} has no document yet.</Notice>}
      <ProblemNotice error={lint.error ?? attach.error} />
      {lint.busy && <Loading label={`Linting ${target?.name}…`} />}
      {result && target && (
        <>
          <p role="status">
            <strong>{target.name}</strong>: {result.findings.length === 0 ? 'no findings.' : (
              <>{(['error', 'warn', 'info', 'hint'] as const).map((s) => <span key={s}><Badge kind={s}>{result.counts[s] ?? 0} {s}</Badge> </span>)}</>
            )}
            {' '}With this ruleset’s default threshold (<strong>{ruleset.blocking_severity}</strong>), findings marked “blocks” would refuse a publish.
          </p>
          <FindingsTable items={result.findings} text={result.text} threshold={ruleset.blocking_severity ?? 'error'} caption={`Findings for ${target.name}`} />
          {props.canWrite && (
            <div class="form-actions">
              {attached ? <Notice kind="ok">Attached: {target.name}’s uploads are now linted with {ruleset.name}.</Notice> : (
                <button type="button" class="primary" disabled={attach.busy || target.ruleset_id === ruleset.id}
                  onClick={() => void attach.run(async () => { await api.patch(`/v1/apis/${target.id}`, { ruleset_id: ruleset.id }); setAttached(true) })}>
                  {target.ruleset_id === ruleset.id ? 'Already attached' : `Attach to ${target.name}`}
                </button>
              )}
            </div>
          )}
        </>
      )}
    </Panel>
  )
}
