import { STATUS_CODES } from 'node:http'
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { RegistryError, type ErrorCode, type ProblemItem } from '../errors.js'
import { unsupportedMediaType } from './body-parsers.js'
import { prefersHtml } from './html-reply.js'

/** Fastify's own errors, by code, in the service's vocabulary. */
const FASTIFY_CODES: Record<string, ErrorCode> = {
  FST_ERR_CTP_BODY_TOO_LARGE: 'payload_too_large',
  FST_ERR_CTP_INVALID_MEDIA_TYPE: 'unsupported_media_type',
  FST_ERR_CTP_EMPTY_JSON_BODY: 'invalid_request',
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: 'invalid_request',
  FST_ERR_CTP_EMPTY_TYPE: 'unsupported_media_type',
  FST_ERR_CTP_INVALID_TYPE: 'unsupported_media_type',
  FST_ERR_VALIDATION: 'invalid_request',
  FST_ERR_BAD_URL: 'invalid_request',
  FST_ERR_ASYNC_CONSTRAINT: 'invalid_request',
}

interface AjvError {
  instancePath?: string
  message?: string
  keyword?: string
  params?: Record<string, unknown>
}

/** File-system errors that mean the storage is full: the write is refused, nothing is stored. */
const STORAGE_FULL = new Set(['ENOSPC', 'EDQUOT'])

/** Turns anything thrown into a RegistryError; unknown errors become a bare 500. */
export function toRegistryError(error: unknown): RegistryError {
  if (error instanceof RegistryError) return error
  if (STORAGE_FULL.has((error as NodeJS.ErrnoException | undefined)?.code ?? '')) {
    return new RegistryError('storage_full', 'the registry has no space left on its storage; nothing was stored, retry later')
  }
  const fastifyError = error as FastifyError & { validation?: AjvError[]; validationContext?: string }
  if (fastifyError?.validation) {
    const where = fastifyError.validationContext ?? 'request'
    return new RegistryError('invalid_request', `invalid ${where}: ${describeValidation(fastifyError.validation[0])}`,
      fastifyError.validation.slice(0, 20).map((e) => ({ path: pointerSegments(e.instancePath), message: describeValidation(e) })))
  }
  const mapped = fastifyError?.code ? FASTIFY_CODES[fastifyError.code] : undefined
  if (mapped) return new RegistryError(mapped, fastifyError.message)
  const status = fastifyError?.statusCode
  if (status === 429) return new RegistryError('rate_limited', 'too many requests for this key; retry later')
  if (status && status >= 400 && status < 500) {
    const code: ErrorCode = status === 404 ? 'not_found' : status === 413 ? 'payload_too_large' : status === 415 ? 'unsupported_media_type' : 'invalid_request'
    return new RegistryError(code, fastifyError.message || STATUS_CODES[status] || 'bad request')
  }
  return new RegistryError('internal', 'internal error')
}

function describeValidation(error: AjvError | undefined): string {
  if (!error) return 'invalid'
  const at = error.instancePath ? `${error.instancePath.slice(1).replace(/\//g, '.')} ` : ''
  if (error.keyword === 'additionalProperties') return `unknown field '${String(error.params?.additionalProperty)}'`
  if (error.keyword === 'required') return `missing required field '${String(error.params?.missingProperty)}'`
  return `${at}${error.message ?? 'is invalid'}`.trim()
}

function pointerSegments(pointer: string | undefined): (string | number)[] {
  if (!pointer) return []
  return pointer.slice(1).split('/').map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'))
}

export function problemBody(error: RegistryError): Record<string, unknown> {
  const body: Record<string, unknown> = {
    type: 'about:blank',
    title: STATUS_CODES[error.status] ?? 'Error',
    status: error.status,
    code: error.code,
    detail: error.message,
  }
  if (error.errors) body.errors = error.errors satisfies ProblemItem[]
  return body
}

export function sendProblem(reply: FastifyReply, error: RegistryError): FastifyReply {
  if (error.headers) reply.headers(error.headers)
  return reply.status(error.status).type('application/problem+json').send(JSON.stringify(problemBody(error)))
}

/**
 * One error handler and one not-found handler for the whole app. A browser that asks for an unknown
 * page gets `notFoundPage` (HTML) when one is given; every other client gets problem+json.
 */
export function registerProblemHandlers(app: FastifyInstance, notFoundPage?: (reply: FastifyReply) => FastifyReply): void {
  app.setErrorHandler((error: unknown, request: FastifyRequest, reply: FastifyReply) => {
    // Fastify's own 415 (a Content-Type it cannot even read) says what the route takes, like ours.
    const code = (error as FastifyError | undefined)?.code
    const problem = code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE'
      ? unsupportedMediaType(request)
      // The limit differs by route (documents sent as JSON objects are bounded by the workers' heap).
      : code === 'FST_ERR_CTP_BODY_TOO_LARGE'
        ? new RegistryError('payload_too_large', `the request body is larger than the ${request.routeOptions.bodyLimit} bytes this route takes; nothing was stored`)
        : toRegistryError(error)
    if (problem.status >= 500) request.log.error({ err: error }, 'request failed')
    return sendProblem(reply, problem)
  })
  app.setNotFoundHandler((request, reply) => {
    if (notFoundPage) {
      reply.header('vary', 'Accept')
      if (prefersHtml(request.headers.accept)) return notFoundPage(reply)
    }
    return sendProblem(reply, new RegistryError('not_found', `no route ${request.method} ${request.url.split('?')[0]}`))
  })
}
