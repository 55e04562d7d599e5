import { useCallback, useEffect, useRef, useState } from 'preact/hooks'
import { api, ApiError, type Query } from './api'

export interface Fetched<T> {
  data: T | undefined
  error: ApiError | undefined
  loading: boolean
  /** Fetches again; the data shown stays until the new answer arrives. */
  reload: () => void
}

/**
 * GETs `path` (with `query`) and refetches when either changes; a newer request aborts the one in
 * flight, so a fast typist sees the answer to what the box holds now. `null` fetches nothing.
 */
export function useFetch<T>(path: string | null, query?: Query): Fetched<T> {
  const [state, setState] = useState<{ data?: T; error?: ApiError; loading: boolean }>({ loading: path !== null })
  const [tick, setTick] = useState(0)
  const key = path === null ? null : `${path}?${JSON.stringify(query ?? {})}`
  useEffect(() => {
    if (path === null) return
    const controller = new AbortController()
    setState((previous) => ({ ...previous, loading: true }))
    api.get<T>(path, query, controller.signal).then(
      (data) => { if (!controller.signal.aborted) setState({ data, loading: false }) },
      (error: Error) => {
        if (controller.signal.aborted || error.name === 'AbortError') return
        setState((previous) => ({ data: previous.data, error: error as ApiError, loading: false }))
      },
    )
    return () => controller.abort()
  }, [key, tick])
  const reload = useCallback(() => setTick((n) => n + 1), [])
  return { data: state.data, error: state.error, loading: state.loading, reload }
}

/** `value`, once it has stopped changing for `ms`. */
export function useDebounced<T>(value: T, ms: number): T {
  const [settled, setSettled] = useState(value)
  useEffect(() => {
    const timer = setTimeout(() => setSettled(value), ms)
    return () => clearTimeout(timer)
  }, [value, ms])
  return settled
}

/** Calls `tick` every `ms` while `active` (builds that are queued or running refresh themselves). */
export function usePolling(active: boolean, ms: number, tick: () => void): void {
  const latest = useRef(tick)
  latest.current = tick
  useEffect(() => {
    if (!active) return
    const timer = setInterval(() => latest.current(), ms)
    return () => clearInterval(timer)
  }, [active, ms])
}

/**
 * Runs an action that changes something: `busy` while it runs, its error kept for display, and
 * `done` with a message on success.
 */
export function useAction() {
  const [busy, setBusy] = useState(false)
  const [error, setError] = useState<ApiError | undefined>()
  const run = useCallback(async <T,>(action: () => Promise<T>): Promise<T | undefined> => {
    setBusy(true)
    setError(undefined)
    try {
      return await action()
    } catch (caught) {
      if (caught instanceof ApiError) setError(caught)
      else setError(new ApiError({ status: 0, code: 'client_error', title: 'Error', detail: (caught as Error).message }))
      return undefined
    } finally {
      setBusy(false)
    }
  }, [])
  return { busy, error, run, clearError: () => setError(undefined) }
}
