import { LocationProvider, Route, Router } from 'preact-iso'
import { Frame } from './frame'
import { Keys } from './pages/keys'
import { NotFound } from './pages/not-found'
import { Overview } from './pages/overview'
import { SessionGate } from './session'

/** Only links under /console are the app's; a link to a site or a download is a normal page load. */
const SCOPE = '/console'

export function App() {
  return (
    <LocationProvider scope={SCOPE}>
      <SessionGate>
        <Frame>
          <Router>
            <Route path="/console" component={Overview} />
            <Route path="/console/keys" component={Keys} />
            <Route default component={NotFound} />
          </Router>
        </Frame>
      </SessionGate>
    </LocationProvider>
  )
}
