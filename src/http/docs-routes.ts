import type { FastifyInstance } from 'fastify'
import { Type } from 'typebox'
import { notFound } from '../errors.js'
import { SiteAssets } from '../sites/assets.js'
import { serviceReferencePage } from '../sites/pages.js'
import { sendAsset } from './asset-reply.js'
import { sendPage } from './html-reply.js'

const BASE = '/docs'

/**
 * `/docs`: the service's own reference, rendered by the same Scalar bundle as the sites' reference
 * pages, from this host only (its files under `/docs/_assets/`) and under the same CSP.
 */
export function registerDocsRoutes(app: FastifyInstance, title: string): void {
  const assets = SiteAssets.shared()
  const page = serviceReferencePage(title, assets.urls(BASE))
  const schema = { hide: true }
  app.get(BASE, { schema }, async (_request, reply) => sendPage(reply, 200, page))
  app.get(`${BASE}/`, { schema }, async (_request, reply) => sendPage(reply, 200, page))
  app.get(`${BASE}/_assets/:file`, {
    schema: { ...schema, params: Type.Object({ file: Type.String({ maxLength: 200 }) }) },
  }, async (request, reply) => {
    const asset = assets.get((request.params as { file: string }).file)
    if (!asset) throw notFound('file')
    return sendAsset(request, reply, asset)
  })
}
