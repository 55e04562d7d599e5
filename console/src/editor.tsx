/**
 * The code editor (CodeMirror 6), loaded only by the pages that edit a document: YAML highlighting
 * (JSON is YAML too), line numbers, undo history, and diagnostics from `check` as the text changes.
 * Tab is left to move focus, so the editor never traps a keyboard user.
 */
import { useEffect, useRef } from 'preact/hooks'
import { defaultKeymap, history, historyKeymap } from '@codemirror/commands'
import { yaml } from '@codemirror/lang-yaml'
import { bracketMatching, defaultHighlightStyle, indentOnInput, syntaxHighlighting } from '@codemirror/language'
import { linter, lintGutter, type Diagnostic } from '@codemirror/lint'
import { EditorState } from '@codemirror/state'
import { drawSelection, EditorView, highlightActiveLine, highlightActiveLineGutter, keymap, lineNumbers } from '@codemirror/view'

export type { Diagnostic }

export interface CodeEditorProps {
  /**
   * The text the editor starts with. The editor owns its text from then on (a parent that feeds each
   * change back as the value raced the typing: a late render put an older text back, which fired a
   * change again, and the two went on replacing each other); to replace it, give the editor a new key.
   */
  value: string
  onChange: (text: string) => void
  /** The accessible name of the editing area. */
  label: string
  /** Diagnostics for a text (run a moment after typing stops). */
  check?: (text: string) => Promise<Diagnostic[]>
}

/** The page's stylesheet does not reach into the shadow root: the editor's own look is set here. */
const THEME = EditorView.theme({
  '&': { height: '460px', fontSize: '13px', backgroundColor: '#fff' },
  '&.cm-focused': { outline: 'none' },
  '.cm-scroller': { fontFamily: 'ui-monospace, SFMono-Regular, Menlo, Consolas, "Liberation Mono", monospace', lineHeight: '1.55' },
  '.cm-gutters': { backgroundColor: '#f5f7fa', borderRight: '1px solid #e1e5ec', color: '#6b7588' },
  '.cm-activeLine': { backgroundColor: '#f3f6fd' },
  '.cm-activeLineGutter': { backgroundColor: '#e9effb' },
  // CodeMirror draws lint underlines and gutter markers as data: SVG images, which the console's CSP
  // (img-src 'self') blocks: plain CSS draws them instead.
  '.cm-lintRange': { backgroundImage: 'none', textDecorationLine: 'underline', textDecorationStyle: 'wavy', textDecorationSkipInk: 'none' },
  '.cm-lintRange-error': { backgroundImage: 'none', textDecorationColor: '#d11' },
  '.cm-lintRange-warning': { backgroundImage: 'none', textDecorationColor: '#c70' },
  '.cm-lintRange-info': { backgroundImage: 'none', textDecorationColor: '#888' },
  '.cm-lintRange-hint': { backgroundImage: 'none', textDecorationColor: '#66d' },
  '.cm-lint-marker': { content: 'normal', boxSizing: 'border-box', width: '0.8em', height: '0.8em', margin: '0.1em', borderRadius: '50%' },
  '.cm-lint-marker-error': { content: 'normal', backgroundColor: '#f87', border: '2px solid #d22' },
  '.cm-lint-marker-warning': { content: 'normal', backgroundColor: '#fe8', border: '2px solid #c90' },
  '.cm-lint-marker-info': { content: 'normal', backgroundColor: '#aaf', border: '2px solid #77e', borderRadius: '2px' },
})

export default function CodeEditor(props: CodeEditorProps) {
  const host = useRef<HTMLDivElement>(null)
  const view = useRef<EditorView>()
  const latest = useRef(props)
  latest.current = props

  useEffect(() => {
    const extensions = [
      lineNumbers(), highlightActiveLineGutter(), history(), drawSelection(), indentOnInput(), bracketMatching(),
      highlightActiveLine(), syntaxHighlighting(defaultHighlightStyle, { fallback: true }), yaml(),
      keymap.of([...defaultKeymap, ...historyKeymap]),
      THEME,
      EditorView.contentAttributes.of({ 'aria-label': props.label }),
      EditorView.updateListener.of((update) => {
        if (update.docChanged) latest.current.onChange(update.state.doc.toString())
      }),
      lintGutter(),
      linter(async (editor) => latest.current.check?.(editor.state.doc.toString()) ?? [], { delay: 400 }),
    ]
    // Inside a shadow root CodeMirror's styles go into a constructed style sheet (adoptedStyleSheets),
    // which the console's CSP allows; in the document itself they would need an inline <style>.
    const shadow = host.current!.shadowRoot ?? host.current!.attachShadow({ mode: 'open' })
    const parent = document.createElement('div')
    shadow.replaceChildren(parent)
    view.current = new EditorView({ parent, root: shadow, state: EditorState.create({ doc: props.value, extensions }) })
    return () => view.current?.destroy()
  }, [])

  return <div class="editor" ref={host} />
}
