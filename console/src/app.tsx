import { LocationProvider, Route, Router } from 'preact-iso'
import { Frame } from './frame'
import { NotFound } from './pages/not-found'
import { Overview } from './pages/overview'

/** Only links under /console are the app's; a link to a site or a download is a normal page load. */
const SCOPE = '/console'

export function App() {
  return (
    <LocationProvider scope={SCOPE}>
      <Frame>
        <Router>
          <Route path="/console" component={Overview} />
          <Route default component={NotFound} />
        </Router>
      </Frame>
    </LocationProvider>
  )
}
