/** Lint findings and validation problems, with where they are and whether they block a publish. */
import { useEffect, useState } from 'preact/hooks'
import type { ProblemItem } from './api'
import { Badge, pathText } from './components'
import type { Located } from './positions'
import type { BlockingSeverity } from './types'

const RANK: Record<string, number> = { hint: 0, info: 1, warn: 2, error: 3 }

/** Whether a finding of `severity` blocks under `threshold` (hint never blocks; `off` blocks nothing). */
export function blocks(severity: string | undefined, threshold: BlockingSeverity | undefined): boolean {
  if (!threshold || threshold === 'off' || severity === undefined || severity === 'hint') return false
  return (RANK[severity] ?? 0) >= RANK[threshold]
}

/** The located text, parsed once when there is something to place (the parser loads on demand). */
export function useLocated(text: string | undefined, wanted: boolean): Located | undefined {
  const [located, setLocated] = useState<Located | undefined>()
  useEffect(() => {
    setLocated(undefined)
    if (!wanted || !text) return
    let current = true
    void import('./positions').then(({ locate }) => { if (current) setLocated(locate(text)) })
    return () => { current = false }
  }, [text, wanted])
  return located
}

export function FindingsTable(props: {
  items: ProblemItem[]
  /** The text that was checked, to show line numbers. */
  text?: string
  /** The API's effective threshold: findings at or above it are marked as blocking. */
  threshold?: BlockingSeverity
  /** Validation problems rather than lint findings: every one refuses the document. */
  invalid?: boolean
  caption: string
}) {
  const located = useLocated(props.text, props.items.length > 0)
  if (props.items.length === 0) return null
  return (
    <div class="table-wrap">
      <table class="list">
        <caption class="visually-hidden">{props.caption}</caption>
        <thead>
          <tr>
            <th scope="col">Severity</th>
            <th scope="col">Problem</th>
            <th scope="col">Where</th>
            <th scope="col">Blocks publish</th>
          </tr>
        </thead>
        <tbody>
          {props.items.map((item, i) => {
            const severity = props.invalid ? 'error' : item.severity ?? 'error'
            const blocking = props.invalid || blocks(severity, props.threshold)
            const position = located?.position(item.path ?? [])
            return (
              <tr key={i}>
                <td><Badge kind={severity}>{props.invalid ? 'invalid' : severity}</Badge></td>
                <td>
                  <div>{item.message}</div>
                  {item.code && <div class="cell-sub mono">{item.code}</div>}
                </td>
                <td>
                  <div class="mono small">{pathText(item.path)}</div>
                  {position && <div class="cell-sub">{position.exact ? `line ${position.line}` : `near line ${position.line}`}</div>}
                </td>
                <td>{blocking ? <Badge kind="blocks">blocks</Badge> : <span class="muted">no</span>}</td>
              </tr>
            )
          })}
        </tbody>
      </table>
    </div>
  )
}
