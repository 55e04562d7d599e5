/** The three registry resource kinds as the console names and routes them. */
import type { Kind } from './types'

export interface KindInfo {
  kind: Kind
  /** The path segment: `/v1/apis`, `/console/apis`. */
  plural: 'apis' | 'schemas' | 'rulesets'
  singular: string
  title: string
  /** The plural in a sentence: `6 APIs`, `2 schemas`. */
  noun: string
  /** The current document's path segment under the resource. */
  documentPath: 'spec' | 'document'
  lead: string
}

export const KINDS: Record<KindInfo['plural'], KindInfo> = {
  apis: {
    kind: 'api', plural: 'apis', singular: 'API', title: 'APIs', noun: 'APIs', documentPath: 'spec',
    lead: 'OpenAPI 3.0 and 3.1 descriptions with their full version history; an attached ruleset lints every upload.',
  },
  schemas: {
    kind: 'schema', plural: 'schemas', singular: 'schema', title: 'Schemas', noun: 'schemas', documentPath: 'document',
    lead: 'JSON Schemas (draft-04 to 2020-12) with their versions; APIs of the organization can $ref them.',
  },
  rulesets: {
    kind: 'ruleset', plural: 'rulesets', singular: 'ruleset', title: 'Rulesets', noun: 'rulesets', documentPath: 'document',
    lead: 'Spectral rulesets: attach one to an API and uploads with findings at its threshold are refused.',
  },
}

export const resourcePath = (info: KindInfo, id: string, tail = '') => `/console/${info.plural}/${id}${tail}`
export const apiPath = (info: KindInfo, id?: string, tail = '') => `/v1/${info.plural}${id ? `/${id}` : ''}${tail}`
