import { Page } from '../components'

export function NotFound() {
  return (
    <Page title="Page not found">
      <p>There is no console page at this address. <a href="/console/">Go to the overview</a>.</p>
    </Page>
  )
}
