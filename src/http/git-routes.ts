/**
 * `git clone http://HOST/git/<org-slug>.git`: the organization's mirror over smart HTTP, protocol v2,
 * read-only. Authenticated by an organization key (HTTP basic with the key as password, or a Bearer
 * header); anything else is the same 401 with `WWW-Authenticate: Basic`, whether the organization
 * exists or not. Its own plugin scope: no JSON body parsers, only git's request type.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify'
import { Type } from 'typebox'
import type { Registry } from '../domain/registry.js'
import type { OrganizationRecord } from '../storage/registry-records.js'
import { RegistryError, notFound } from '../errors.js'
import {
  advertisement, errorLine, fetchResponse, lsRefs, parseCommand, parseFetch, pkt, FLUSH, UnsupportedFetch, type FetchRequest,
} from './git-protocol.js'
import { problems } from './schemas.js'

const READ_ONLY = 'the mirror is read-only: clone and fetch only (git-upload-pack, protocol v2); push to the registry through its API'

const RepoParams = Type.Object({ repo: Type.String({ pattern: '^[a-z0-9]+(?:-[a-z0-9]+)*\\.git$', description: '<organization slug>.git' }) })
const PktLines = Type.String({ format: 'binary', description: 'git protocol data (pkt-lines)' })
const tags = ['Git']
// An organization key as the password of HTTP basic credentials (what git sends), or as a Bearer token.
const security: Record<string, string[]>[] = [{ basic: [] }, { bearer: [] }]

declare module 'fastify' {
  interface FastifyRequest {
    gitOrganization?: OrganizationRecord
  }
}

function challenge(): RegistryError {
  return new RegistryError('unauthorized',
    'an organization key is required: HTTP basic auth with the key as the password, or Authorization: Bearer sk_…',
    undefined, { 'www-authenticate': 'Basic realm="API Registry", charset="UTF-8"' })
}

/** The key in `Authorization`: a Bearer token, or the password of HTTP basic credentials. */
function keyOf(header: string | undefined): string | undefined {
  if (!header) return undefined
  const bearer = /^Bearer\s+(\S+)\s*$/i.exec(header)
  if (bearer) return bearer[1]
  const basic = /^Basic\s+([A-Za-z0-9+/=]+)\s*$/i.exec(header)
  if (!basic) return undefined
  const decoded = Buffer.from(basic[1], 'base64').toString('utf8')
  const colon = decoded.indexOf(':')
  return colon < 0 ? undefined : decoded.slice(colon + 1)
}

export async function gitRoutes(app: FastifyInstance, options: { registry: Registry; bodyLimit: number }): Promise<void> {
  const { registry } = options
  app.removeAllContentTypeParsers()
  app.addContentTypeParser('application/x-git-upload-pack-request', { parseAs: 'buffer', bodyLimit: options.bodyLimit },
    (_request, body, done) => done(null, body))

  app.addHook('onRequest', async (request) => {
    const slug = /^\/git\/([^/?]*?)\.git(?:[/?]|$)/.exec(request.url)?.[1]
    const key = keyOf(request.headers.authorization)
    if (!key || !slug) throw challenge()
    const actor = await registry.organizations.authenticate(`Bearer ${key}`).catch(() => {
      throw challenge()
    })
    if (actor.organization.slug !== slug) throw challenge()
    request.gitOrganization = actor.organization
    request.actor = actor // rate limits count per key, like every other route
  })

  const mirrorOf = (request: FastifyRequest) => {
    if (!registry.mirror || !request.gitOrganization) throw notFound('repository')
    return registry.mirror.repository(request.gitOrganization)
  }

  // Anything else under /git (pushes, the dumb protocol): authenticated first like the rest, then 404.
  app.all('/git/*', { schema: { hide: true } }, async () => {
    throw new RegistryError('not_found', READ_ONLY)
  })

  app.get('/git/:repo/info/refs', {
    schema: {
      tags, security, summary: 'Git smart HTTP: capability advertisement (clone and fetch only)',
      params: RepoParams,
      querystring: Type.Object({ service: Type.String({ description: 'git-upload-pack; git-receive-pack is answered with a pkt-line error (the mirror is read-only)' }) }),
      response: {
        200: {
          description: 'the advertisement: protocol version 2 when the request has Git-Protocol: version=2, else an error pkt-line saying so',
          content: {
            'application/x-git-upload-pack-advertisement': { schema: PktLines },
            'application/x-git-receive-pack-advertisement': { schema: PktLines },
          },
        },
        ...problems(400, 401, 404),
      },
    },
  }, async (request, reply) => {
    const { service } = request.query as { service: string }
    if (service === 'git-receive-pack') {
      // Answered in git's own terms, so that `git push` prints this instead of "repository not found".
      mirrorOf(request)
      return reply.header('content-type', 'application/x-git-receive-pack-advertisement').header('cache-control', 'no-cache')
        .send(Buffer.concat([pkt('# service=git-receive-pack\n'), FLUSH, errorLine(READ_ONLY)]))
    }
    if (service !== 'git-upload-pack') throw new RegistryError('not_found', READ_ONLY)
    mirrorOf(request)
    reply.header('content-type', 'application/x-git-upload-pack-advertisement').header('cache-control', 'no-cache')
    if (!/version=2/.test(String(request.headers['git-protocol'] ?? ''))) {
      // Protocol v0/v1 clients get a clear message; git speaks v2 over HTTP by default since 2.26.
      return reply.send(Buffer.concat([pkt('# service=git-upload-pack\n'), FLUSH,
        errorLine('this server speaks git protocol version 2: use git 2.26 or newer, or git -c protocol.version=2')]))
    }
    return reply.send(advertisement())
  })

  app.post('/git/:repo/git-upload-pack', {
    schema: {
      tags, security, summary: 'Git smart HTTP: ls-refs and fetch (protocol v2)',
      params: RepoParams,
      body: { content: { 'application/x-git-upload-pack-request': { schema: PktLines } } },
      response: {
        200: { description: 'the command\'s answer (a pack for fetch), or an error pkt-line', content: { 'application/x-git-upload-pack-result': { schema: PktLines } } },
        ...problems(400, 401, 404, 413, 415),
      },
    },
    // The body is pkt-lines, not JSON: the schema above documents it, nothing validates it as a string.
    validatorCompiler: () => () => true,
  }, async (request, reply) => {
    const repo = mirrorOf(request)
    await registry.mirror?.follow(request.gitOrganization!) // a replica that is not the writer catches up first
    // Inflated already when sent with Content-Encoding: gzip, within the body limit (content-encoding.ts).
    const body = request.body as Buffer
    reply.header('content-type', 'application/x-git-upload-pack-result').header('cache-control', 'no-cache')
    let command
    try {
      command = parseCommand(body)
    } catch {
      throw new RegistryError('invalid_request', 'not a git protocol v2 request')
    }
    const head = await repo.head()
    if (command.command === 'ls-refs') return reply.send(lsRefs(command.args, head))
    if (command.command !== 'fetch') return reply.send(errorLine(`unknown command '${command.command}'`))
    let fetch: FetchRequest
    try {
      fetch = parseFetch(command.args)
    } catch (error) {
      if (error instanceof UnsupportedFetch) return reply.send(errorLine(error.message))
      throw error
    }
    const common: string[] = []
    for (const have of fetch.haves) if (await repo.hasCommit(have)) common.push(have)
    if (!fetch.done && common.length === 0) return reply.send(fetchResponse(fetch, common, undefined))
    let selection
    try {
      selection = await repo.selectUpload({ wants: fetch.wants, common, shallows: fetch.shallows, deepen: fetch.deepen, omitBlobs: fetch.omitBlobs })
    } catch {
      return reply.send(errorLine('upload-pack: not our ref'))
    }
    const pack = await repo.pack(selection.oids)
    return reply.send(fetchResponse(fetch, common, pack, selection.shallow))
  })
}
