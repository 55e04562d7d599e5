/** Who is signed in: read from `GET /v1/session` when the page loads, set by the sign-in form. */
import { createContext, type ComponentChildren } from 'preact'
import { useContext, useEffect, useState } from 'preact/hooks'
import { api, ApiError, onUnauthorized, setCsrfToken } from './api'
import { Loading } from './components'
import type { Role, Session } from './types'
import { SignIn } from './pages/sign-in'

interface SessionState {
  session: Session
  signOut: () => Promise<void>
}

const SessionContext = createContext<SessionState | null>(null)

export function useSession(): SessionState {
  const state = useContext(SessionContext)
  if (!state) throw new Error('useSession outside a signed-in page')
  return state
}

const RANK: Record<Role, number> = { read: 0, write: 1, admin: 2 }

/** Whether the signed-in key's role allows what `needed` allows (the server checks it again). */
export function useCan(needed: Role): boolean {
  return RANK[useSession().session.key.role] >= RANK[needed]
}

/** Renders its children once signed in; until then, the sign-in form at whatever URL was asked for. */
export function SessionGate(props: { children: ComponentChildren }) {
  const [session, setSession] = useState<Session | null | undefined>(undefined)
  const [startError, setStartError] = useState<ApiError | undefined>()

  const accept = (next: Session | null) => {
    setCsrfToken(next?.csrf_token ?? null)
    setSession(next)
  }

  useEffect(() => {
    api.get<{ data: Session }>('/v1/session').then(
      (answer) => accept(answer.data),
      (error: ApiError) => {
        if (error.status === 401) accept(null)
        else setStartError(error)
      },
    )
    return onUnauthorized(() => accept(null))
  }, [])

  if (startError) {
    return <div class="signin"><div class="box" role="alert"><h1>The registry did not answer</h1><p>{startError.problem.detail}</p></div></div>
  }
  if (session === undefined) return <Loading label="Opening the console…" />
  if (session === null) return <SignIn onSignedIn={accept} />
  const signOut = async () => {
    try {
      await api.del('/v1/session')
    } finally {
      accept(null)
    }
  }
  return <SessionContext.Provider value={{ session, signOut }}>{props.children}</SessionContext.Provider>
}
