import type { Log, ReportingDescriptor, Result } from 'sarif'
import { PACKAGE_VERSION } from '../../version.js'
import type { Position } from '../../documents/positions.js'

export type Severity = 'error' | 'warn' | 'info' | 'hint'

/** One thing the registry said about a sent document, placed in the file the user wrote. */
export interface Finding extends Position {
  code: string
  message: string
  severity: Severity
  /** Where in the document (JSON pointer segments), as the registry answered it. */
  path: (string | number)[]
}

/** What a push, lint, diff or restore has to say: the file, how it ended, and the findings. */
export interface Report {
  /** The file as the user named it (relative paths stay relative: CI annotations need them so). */
  file: string
  /** One line for people: what happened. */
  summary: string
  blocked: boolean
  findings: Finding[]
  /** Anything else a JSON reader may want (the version, the diff). */
  details?: Record<string, unknown>
}

export const FORMATS = ['stylish', 'json', 'sarif', 'github', 'junit'] as const
export type Format = (typeof FORMATS)[number]

const WORDS: Record<Severity, string> = { error: 'error', warn: 'warning', info: 'info', hint: 'hint' }

/** Spectral's stylish output: the file, one aligned line per finding, and a count. */
function stylish(report: Report): string {
  const lines: string[] = []
  if (report.findings.length) {
    lines.push(report.file)
    const rows = report.findings.map((f) => [`${f.line}:${f.column}`, WORDS[f.severity], f.code, f.message, f.path.join('.')])
    const widths = [0, 1, 2].map((i) => Math.max(...rows.map((r) => r[i].length)))
    for (const row of rows) lines.push(`  ${row.map((cell, i) => (i < 3 ? cell.padEnd(widths[i]) : cell)).join('  ').trimEnd()}`)
    lines.push('')
    const count = (s: Severity) => report.findings.filter((f) => f.severity === s).length
    lines.push(`${report.findings.length} problem${report.findings.length === 1 ? '' : 's'} (${count('error')} errors, ${count('warn')} warnings, ${count('info')} infos, ${count('hint')} hints)`)
  }
  lines.push(report.summary)
  return `${lines.join('\n')}\n`
}

function json(report: Report): string {
  return `${JSON.stringify({ file: report.file, blocked: report.blocked, summary: report.summary, findings: report.findings, ...report.details }, null, 2)}\n`
}

const LEVELS: Record<Severity, Result.level> = { error: 'error', warn: 'warning', info: 'note', hint: 'note' }

/** SARIF 2.1.0 for code scanning: one rule per finding code, one result per finding. */
function sarif(report: Report): string {
  const uri = report.file.split('\\').join('/')
  const rules: ReportingDescriptor[] = [...new Set(report.findings.map((f) => f.code))].map((id) => ({ id }))
  const log: Log = {
    $schema: 'https://json.schemastore.org/sarif-2.1.0.json',
    version: '2.1.0',
    runs: [{
      tool: { driver: { name: 'api-registry', version: PACKAGE_VERSION, rules } },
      artifacts: [{ location: { uri } }],
      results: report.findings.map((f) => ({
        ruleId: f.code,
        ruleIndex: rules.findIndex((r) => r.id === f.code),
        level: LEVELS[f.severity],
        message: { text: f.message },
        locations: [{ physicalLocation: { artifactLocation: { uri, index: 0 }, region: { startLine: f.line, startColumn: f.column } } }],
      })),
    }],
  }
  return `${JSON.stringify(log, null, 2)}\n`
}

/** GitHub's workflow commands escape these in the message, and also `:` and `,` in properties. */
const escapeData = (s: string) => s.replace(/%/g, '%25').replace(/\r/g, '%0D').replace(/\n/g, '%0A')
const escapeProperty = (s: string) => escapeData(s).replace(/:/g, '%3A').replace(/,/g, '%2C')
const COMMANDS: Record<Severity, string> = { error: 'error', warn: 'warning', info: 'notice', hint: 'notice' }

function github(report: Report): string {
  const lines = report.findings.map((f) =>
    `::${COMMANDS[f.severity]} file=${escapeProperty(report.file)},line=${f.line},col=${f.column},title=${escapeProperty(f.code)}::${escapeData(f.message)}`)
  lines.push(report.summary)
  return `${lines.join('\n')}\n`
}

const xml = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;')
  // XML 1.0 has no place for most control characters, even escaped.
  // eslint-disable-next-line no-control-regex
  .replace(/[\u0000-\u0008\u000b\u000c\u000e-\u001f]/g, '')

/** JUnit XML: one test suite for the file, one failed test case per finding of error or warning, one passing case when clean. */
function junit(report: Report): string {
  const failing = report.findings.filter((f) => f.severity === 'error' || f.severity === 'warn')
  const cases = failing.map((f) => {
    const where = `${report.file}:${f.line}:${f.column}`
    return `    <testcase classname="${xml(report.file)}" name="${xml(`${f.code} ${where}`)}">\n` +
      `      <failure type="${f.severity}" message="${xml(f.message)}">${xml(`${where} ${WORDS[f.severity]} ${f.code}: ${f.message} (${f.path.join('.')})`)}</failure>\n` +
      '    </testcase>'
  })
  if (!cases.length) cases.push(`    <testcase classname="${xml(report.file)}" name="${xml(report.blocked ? report.summary : 'registry')}"${report.blocked ? `>\n      <failure message="${xml(report.summary)}"/>\n    </testcase>` : '/>'}`)
  const failures = failing.length || (report.blocked ? 1 : 0)
  return '<?xml version="1.0" encoding="UTF-8"?>\n' +
    `<testsuites name="api-registry" tests="${cases.length}" failures="${failures}">\n` +
    `  <testsuite name="${xml(report.file)}" tests="${cases.length}" failures="${failures}" errors="0">\n${cases.join('\n')}\n  </testsuite>\n</testsuites>\n`
}

const RENDERERS: Record<Format, (report: Report) => string> = { stylish, json, sarif, github, junit }

export function renderReport(report: Report, format: Format): string {
  return RENDERERS[format](report)
}
