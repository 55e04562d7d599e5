/** Choosing APIs among thousands: a search box that asks the server, and the first matches as buttons. */
import { useState } from 'preact/hooks'
import type { List } from './api'
import { useDebounced, useFetch } from './hooks'
import type { Resource } from './types'

export function ApiPicker(props: { id: string; label: string; onPick: (api: Resource) => void; exclude?: string[]; action?: string }) {
  const [text, setText] = useState('')
  const q = useDebounced(text.trim(), 120)
  const found = useFetch<List<Resource>>('/v1/apis', { q: q || undefined, limit: 8 })
  const exclude = new Set(props.exclude ?? [])
  const apis = (found.data?.data ?? []).filter((a) => !exclude.has(a.id))
  return (
    <div class="field">
      <label for={props.id}>{props.label}</label>
      <input id={props.id} type="search" autoComplete="off" placeholder="Search APIs by name" value={text}
        onInput={(e) => setText((e.target as HTMLInputElement).value)} aria-describedby={`${props.id}-results`} />
      <ul class="picks" id={`${props.id}-results`} aria-live="polite">
        {apis.map((a) => (
          <li key={a.id}>
            <span><strong>{a.name}</strong> <span class="muted mono small">{a.slug}</span></span>
            <button type="button" class="small" onClick={() => props.onPick(a)} aria-label={`${props.action ?? 'Choose'} ${a.name}`}>{props.action ?? 'Choose'}</button>
          </li>
        ))}
        {found.data && apis.length === 0 && <li class="muted small">No API matches.</li>}
      </ul>
    </div>
  )
}
