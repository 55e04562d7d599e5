import { LocationProvider, Route, Router } from 'preact-iso'
import { Frame } from './frame'
import { BuildDetail, BuildList } from './pages/builds'
import { GuideEditor } from './pages/guide'
import { Keys } from './pages/keys'
import { Mirror } from './pages/mirror'
import { SearchPage } from './pages/search'
import { NotFound } from './pages/not-found'
import { Overview } from './pages/overview'
import { Repository } from './pages/repository'
import { Compare, DocumentView, Reference, ResourceSettings, Versions } from './pages/resource'
import { ResourceCreate, ResourceList } from './pages/resources'
import { RulesetEditor } from './pages/ruleset-editor'
import { SdkCreate, SdkDetail, SdkList } from './pages/sdks'
import { SiteCreate, SiteDetail, SiteList } from './pages/sites'
import { Upload } from './pages/upload'
import { WebhookDeliveries, Webhooks, WebhookSettings } from './pages/webhooks'
import { SessionGate } from './session'

/** Only links under /console are the app's; a link to a site or a download is a normal page load. */
const SCOPE = '/console'

/** The routes of one resource kind (the first match wins: `new` before `:id`). */
function kindRoutes(plural: 'apis' | 'schemas' | 'rulesets') {
  const base = `/console/${plural}`
  return [
    <Route key={`${plural}-list`} path={base} component={ResourceList} plural={plural} />,
    <Route key={`${plural}-new`} path={`${base}/new`} component={ResourceCreate} plural={plural} />,
    <Route key={`${plural}-settings`} path={`${base}/:id`} component={ResourceSettings} plural={plural} />,
    <Route key={`${plural}-versions`} path={`${base}/:id/versions`} component={Versions} plural={plural} />,
    <Route key={`${plural}-upload`} path={`${base}/:id/upload`} component={Upload} plural={plural} />,
    <Route key={`${plural}-document`} path={`${base}/:id/document`} component={DocumentView} plural={plural} />,
    <Route key={`${plural}-diff`} path={`${base}/:id/diff`} component={Compare} plural={plural} />,
  ]
}

export function App() {
  return (
    <LocationProvider scope={SCOPE}>
      <SessionGate>
        <Frame>
          <Router>
            <Route path="/console" component={Overview} />
            {kindRoutes('apis')}
            <Route path="/console/apis/:id/reference" component={Reference} plural="apis" />
            <Route path="/console/apis/:id/repository" component={Repository} plural="apis" />
            {kindRoutes('schemas')}
            {kindRoutes('rulesets')}
            <Route path="/console/rulesets/:id/editor" component={RulesetEditor} plural="rulesets" />
            <Route path="/console/sites" component={SiteList} />
            <Route path="/console/sites/new" component={SiteCreate} />
            <Route path="/console/sites/:id" component={SiteDetail} />
            <Route path="/console/sites/:id/guides/new" component={GuideEditor} />
            <Route path="/console/sites/:id/guides/:slug" component={GuideEditor} />
            <Route path="/console/sdks" component={SdkList} />
            <Route path="/console/sdks/new" component={SdkCreate} />
            <Route path="/console/sdks/:id" component={SdkDetail} />
            <Route path="/console/builds" component={BuildList} />
            <Route path="/console/builds/:id" component={BuildDetail} />
            <Route path="/console/keys" component={Keys} />
            <Route path="/console/webhooks" component={Webhooks} />
            <Route path="/console/webhooks/:id" component={WebhookSettings} />
            <Route path="/console/webhooks/:id/deliveries" component={WebhookDeliveries} />
            <Route path="/console/mirror" component={Mirror} />
            <Route path="/console/search" component={SearchPage} />
            <Route default component={NotFound} />
          </Router>
        </Frame>
      </SessionGate>
    </LocationProvider>
  )
}
