/** A guide of a site: its title, slug and place, its Markdown with a live preview, save and delete. */
import { useEffect, useRef, useState } from 'preact/hooks'
import { useLocation } from 'preact-iso'
import { api } from '../api'
import { ConfirmButton, Notice, Page, Panel, Pending, ProblemNotice } from '../components'
import { useAction, useDebounced, useFetch } from '../hooks'
import { useCan, useSession } from '../session'
import type { Guide, Site } from '../types'

export function GuideEditor(props: { id: string; slug?: string }) {
  const site = useFetch<{ data: Site }>(`/v1/sites/${props.id}`)
  const guide = useFetch<{ data: Guide }>(props.slug ? `/v1/sites/${props.id}/guides/${props.slug}` : null)
  const data = site.data?.data
  if (!data || (props.slug && !guide.data)) return <Pending what="Guide" error={site.error ?? guide.error} crumbs={[{ label: 'Sites', href: '/console/sites' }]} />
  return <GuideForm key={props.slug ?? 'new'} site={data} guide={guide.data?.data} />
}

function GuideForm(props: { site: Site; guide: Guide | undefined }) {
  const { site, guide } = props
  const { route } = useLocation()
  const canWrite = useCan('write')
  const { session } = useSession()
  const [title, setTitle] = useState(guide?.title ?? '')
  const [slug, setSlug] = useState(guide?.slug ?? '')
  const [markdown, setMarkdown] = useState(guide?.markdown ?? '')
  const [message, setMessage] = useState<string | undefined>()
  const save = useAction()
  const remove = useAction()
  const siteHref = `/console/sites/${site.slug}`

  const submit = async (event: Event) => {
    event.preventDefault()
    setMessage(undefined)
    const target = guide?.slug ?? slug.trim()
    const body: Record<string, unknown> = { title: title.trim(), markdown }
    if (guide) body.position = guide.position
    if (await save.run(() => api.put(`/v1/sites/${site.id}/guides/${target}`, body))) {
      if (guide) setMessage('Saved.')
      else route(`${siteHref}/guides/${target}`, true)
    }
  }

  return (
    <Page title={guide ? guide.title : 'New guide'} crumbs={[{ label: 'Sites', href: '/console/sites' }, { label: site.name, href: siteHref }, { label: guide ? guide.title : 'New guide' }]}
      actions={guide && site.visibility === 'public' && <a class="button" href={`/@${session.organization.slug}/sites/${site.slug}/guides/${guide.slug}`}>Open the live page</a>}>
      {message && <Notice kind="ok">{message}</Notice>}
      <ProblemNotice error={save.error ?? remove.error} />
      <Panel>
      <form class="stack" onSubmit={submit}>
        <fieldset disabled={!canWrite || save.busy} class="stack bare">
          <legend class="visually-hidden">Guide</legend>
          <div class="row">
            <div class="field">
              <label for="guide-title">Title</label>
              <input id="guide-title" type="text" required maxLength={200} value={title} onInput={(e) => setTitle((e.target as HTMLInputElement).value)} />
            </div>
            {!guide && (
              <div class="field">
                <label for="guide-slug">Slug</label>
                <input id="guide-slug" type="text" required maxLength={64} pattern="[a-z0-9]+(-[a-z0-9]+)*" value={slug} aria-describedby="guide-slug-hint"
                  onInput={(e) => setSlug((e.target as HTMLInputElement).value)} />
                <p class="hint" id="guide-slug-hint">The page’s address: …/guides/<em>slug</em>.</p>
              </div>
            )}
          </div>
          <div class="split">
            <div class="field">
              <label for="guide-markdown">Markdown</label>
              <textarea id="guide-markdown" class="code" spellcheck={true} value={markdown} onInput={(e) => setMarkdown((e.target as HTMLTextAreaElement).value)} />
            </div>
            <div class="field">
              <span class="label" id="preview-label">Preview</span>
              <Preview source={markdown} />
            </div>
          </div>
          <div class="form-actions">
            <button type="submit" class="primary">{guide ? 'Save guide' : 'Create guide'}</button>
            <a href={siteHref}>Back to the site</a>
          </div>
        </fieldset>
      </form>
      </Panel>
      {guide && canWrite && (
        <Panel title="Delete this guide">
          <ConfirmButton label="Delete guide" confirm={`Delete “${guide.title}”`} onConfirm={() => void remove.run(async () => {
            await api.del(`/v1/sites/${site.id}/guides/${guide.slug}`)
            route(siteHref)
          })} />
        </Panel>
      )}
    </Page>
  )
}

/** The rendered Markdown, a moment after typing stops (the renderer loads with the first preview). */
function Preview(props: { source: string }) {
  const host = useRef<HTMLDivElement>(null)
  const source = useDebounced(props.source, 150)
  useEffect(() => {
    let current = true
    void import('../markdown').then(({ renderPreview }) => {
      if (current) host.current?.replaceChildren(...renderPreview(source))
    })
    return () => { current = false }
  }, [source])
  return <div class="preview prose" ref={host} role="region" aria-labelledby="preview-label" tabIndex={0} />
}
