import { Page, Panel } from '../components'

export function Overview() {
  return (
    <Page title="Overview" lead="Your organization’s APIs, schemas, rulesets, sites and SDKs.">
      <Panel title="Welcome">
        <p>The console uses the same <code>/v1</code> REST API as every client: see <a href="/openapi.json">/openapi.json</a>.</p>
      </Panel>
    </Page>
  )
}
