import { useEffect, useRef, useState } from 'preact/hooks'
import { api } from '../api'
import { ProblemNotice } from '../components'
import favicon from '../favicon.svg'
import { useAction } from '../hooks'
import type { Session } from '../types'

/** Paste a key once: the server answers a session cookie, and the key is not kept anywhere here. */
export function SignIn(props: { onSignedIn: (session: Session) => void }) {
  const [key, setKey] = useState('')
  const { busy, error, run } = useAction()
  const input = useRef<HTMLInputElement>(null)
  useEffect(() => {
    document.title = 'Sign in · Registry console'
    input.current?.focus()
  }, [])

  const submit = async (event: Event) => {
    event.preventDefault()
    const answer = await run(() => api.post<{ data: Session }>('/v1/session', { api_key: key.trim() }))
    if (answer) props.onSignedIn(answer.data)
  }

  return (
    <main class="signin">
      <div class="box">
        <img src={favicon} alt="" />
        <h1>Sign in to the registry</h1>
        <p class="lead">Paste an API key of your organization. It is exchanged for a session that ends after 12 hours or when you sign out; the key itself is not stored in the browser.</p>
        <ProblemNotice error={error} title={error?.status === 401 ? 'That key was not accepted' : undefined} />
        <form class="stack" onSubmit={submit}>
          <div class="field">
            <label for="api-key">API key</label>
            <input id="api-key" ref={input} type="password" value={key} autoComplete="off" spellcheck={false} placeholder="sk_…" required
              aria-describedby="api-key-hint" onInput={(event) => setKey((event.target as HTMLInputElement).value)} />
            <p class="hint" id="api-key-hint">The first start printed one (<code>API key: sk_…</code>); <code>registry key create</code> makes more.</p>
          </div>
          <button type="submit" class="primary" disabled={busy || key.trim() === ''}>{busy ? 'Signing in…' : 'Sign in'}</button>
        </form>
        <p class="foot">Everything here is also in the REST API: <a href="/openapi.json">/openapi.json</a>.</p>
      </div>
    </main>
  )
}
