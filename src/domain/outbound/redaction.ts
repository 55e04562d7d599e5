/**
 * The one place where secrets are taken out of texts. Whatever a sync, an SDK build or a mirror push
 * stores, returns or logs (a sync's problem and `last_sync`, a build's error and log, the mirror's
 * `last_error`, the reasons in the server's log), and later what outbound webhooks keep, passes
 * through the `Redactor` of that operation: every secret the process holds for it. A remote may echo
 * what it was sent (an error body quoting the Authorization header, a status line with the token in
 * it), and lower layers quote URLs and headers.
 *
 * Each secret is searched for as it is and in the forms it travels in: percent-encoded (a URL),
 * JSON-escaped (a body), and base64 (HTTP basic authentication sends base64 of `user:secret`, in
 * which the secret's characters depend on where it starts: all three alignments are searched). The
 * user name and password of a URL with credentials are secrets too.
 */
import { RegistryError, type ProblemItem } from '../../errors.js'
import type { ServerLog } from '../operations/server-log.js'

export const REDACTED = '[redacted]'

/**
 * Values shorter than this are not searched for: no credential is that short, and replacing every
 * `t` of a text (a test's token) would make it unreadable.
 */
const MIN_LENGTH = 6

/** Texts longer than this are cut, after redaction (cutting first could leave half a secret). */
const MAX_TEXT = 64 * 1024

/** The characters of base64(secret) that do not depend on what comes before or after it, at each alignment. */
function base64Forms(secret: string): string[] {
  const bytes = Buffer.from(secret, 'utf8')
  const forms: string[] = []
  for (let offset = 0; offset < 3; offset++) {
    const encoded = Buffer.concat([Buffer.alloc(offset), bytes]).toString('base64').replace(/=+$/, '')
    // Leading characters mix in the bytes before; a trailing one mixes in the bytes after.
    const skip = [0, 2, 3][offset]
    const total = offset + bytes.length
    const end = total % 3 === 0 ? encoded.length : encoded.length - 1
    const stable = encoded.slice(skip, end)
    if (stable.length >= MIN_LENGTH) forms.push(stable, stable.replace(/\+/g, '-').replace(/\//g, '_'))
  }
  return forms
}

/**
 * The values to search for: a secret itself, or the credentials a URL holds (a URL is quoted in
 * errors on purpose, so only its user name and password are secrets, not the URL).
 */
function values(value: string): string[] {
  if (!/^[a-z][a-z0-9+.-]*:\/\//i.test(value)) return [value]
  try {
    const url = new URL(value)
    return [url.username, url.password].filter((part) => part !== '').flatMap((part) => [part, safeDecode(part)])
  } catch {
    return [value] // Not a URL after all: the value itself.
  }
}

function safeDecode(text: string): string {
  try {
    return decodeURIComponent(text)
  } catch {
    return text
  }
}

/** Every form a secret travels in. */
function forms(secret: string): string[] {
  return [
    secret, encodeURIComponent(secret), encodeURIComponent(secret).replace(/%[0-9A-F]{2}/g, (e) => e.toLowerCase()),
    encodeURIComponent(secret).replace(/%20/g, '+'), JSON.stringify(secret).slice(1, -1), ...base64Forms(secret),
  ]
}

export class Redactor {
  /** No secret at all. */
  static readonly NONE = new Redactor([])

  readonly #values: string[]
  /** Every form of every value, longest first (a longer form may contain a shorter one). */
  readonly #forms: string[]

  constructor(secrets: Iterable<string | null | undefined>) {
    this.#values = [...new Set([...secrets].flatMap((s) => (s ? values(s) : [])).filter((s) => s.length >= MIN_LENGTH))]
    this.#forms = [...new Set(this.#values.flatMap(forms).filter((f) => f.length >= MIN_LENGTH))].sort((a, b) => b.length - a.length)
  }

  /** These and more: an operation's own (its tokens, webhook secret, URLs that may hold credentials). */
  with(...secrets: (string | null | undefined)[]): Redactor {
    return new Redactor([...this.#values, ...secrets])
  }

  /** The text without any form of any secret (and cut to a bound, after redaction). */
  redact(text: string): string {
    let clean = text
    for (const form of this.#forms) if (clean.includes(form)) clean = clean.split(form).join(REDACTED)
    return clean.length > MAX_TEXT ? `${clean.slice(0, MAX_TEXT)}…` : clean
  }

  /** Strings redacted wherever they are in plain data (log details, problem items). */
  redactValue<T>(value: T): T {
    if (typeof value === 'string') return this.redact(value) as T
    if (Array.isArray(value)) return value.map((v) => this.redactValue(v)) as T
    if (value && typeof value === 'object' && Object.getPrototypeOf(value) === Object.prototype) {
      return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, this.redactValue(v)])) as T
    }
    if (value instanceof Error) return this.redact(`${value.name}: ${value.message}`) as T
    return value
  }

  /** A problem as it may be stored or returned: its detail and items redacted. */
  redactProblem(error: RegistryError): RegistryError {
    const detail = this.redact(error.message)
    const errors = error.errors && this.redactValue<ProblemItem[]>(error.errors)
    if (detail === error.message && JSON.stringify(errors) === JSON.stringify(error.errors)) return error
    return new RegistryError(error.code, detail, errors, error.headers)
  }

  /** A log that redacts everything written to it. */
  log(to: ServerLog): ServerLog {
    return { warn: (details, message) => to.warn(this.redactValue(details), this.redact(message)) }
  }
}
