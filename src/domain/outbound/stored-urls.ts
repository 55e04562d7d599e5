/**
 * URLs a key holder stores (a repository to sync, an SDK output repository and its REST API, the push
 * mirror, an API's logo) never hold a control character. The WHATWG URL parser drops tabs and line
 * breaks and fetch would never send them, but the URL is stored as given and shown, logged and handed
 * to other clients as text, where `…/x.git\r\nX-Injected: 1` is a second header or log line.
 */
import { RegistryError } from '../../errors.js'

/** C0 controls (NUL, tab, CR, LF…), DEL, C1 controls (NEL…) and the Unicode line and paragraph separators. */
const CONTROL = /[\u0000-\u001f\u007f-\u009f\u2028\u2029]/

const MESSAGE = 'must not contain control characters (CR, LF, tab, NUL or any other)'

/** Refuses a URL with a control character in it: 422 invalid_url naming the field (the message never repeats them). */
export function refuseControlCharacters(value: string | null | undefined, field: string): void {
  if (value === null || value === undefined || !CONTROL.test(value)) return
  throw new RegistryError('invalid_url', `${field}: ${MESSAGE}`, [{ path: [field], message: MESSAGE }])
}

/**
 * An http(s) URL the registry will connect to (a push mirror, a webhook endpoint): absolute, without a
 * control character, and without credentials in it, which `credentials` says where to give instead.
 */
export function checkHttpUrl(url: string, credentials: string): void {
  refuseControlCharacters(url, 'url')
  let parsed: URL
  try {
    parsed = new URL(url)
  } catch {
    throw new RegistryError('invalid_request', 'url must be an absolute http(s) URL', [{ path: ['url'], message: 'not a URL' }])
  }
  if (parsed.protocol !== 'https:' && parsed.protocol !== 'http:') {
    throw new RegistryError('invalid_request', 'url must be an http(s) URL', [{ path: ['url'], message: 'only http and https URLs are supported' }])
  }
  if (parsed.username || parsed.password) {
    throw new RegistryError('invalid_request', `url must not hold credentials: ${credentials}`, [{ path: ['url'], message: 'credentials in the URL' }])
  }
}
