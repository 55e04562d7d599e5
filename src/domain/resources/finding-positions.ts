/**
 * Findings in an answer about a document a client just sent (a 422 `lint_blocked`, a dry run, the lint
 * route) carry their line and column in the text sent (docs/api.md, "Findings"), so a CI annotation
 * lands on the line the author wrote. Placed in a worker, for the findings answered only: stored and
 * cached findings keep their path alone, since one lint result serves every text with its checksum.
 */
import { RegistryError } from '../../errors.js'
import type { DocumentFormat, Finding, LocatedFinding, TextBytes } from '../../documents/types.js'
import type { DocumentProcessor, Tenant } from '../documents.js'

/** The text a document was sent as, when it was sent as text (not as a JSON object in an envelope). */
export interface SentText {
  /** As a string, or as the UTF-8 bytes a digest answered. */
  text: string | TextBytes
  format: DocumentFormat
}

/**
 * A digested upload's text, unless it was serialized from an object, or converted to OpenAPI 3 from
 * Swagger 2.0 or Postman: it then has no lines of the client's (a finding about the conversion has no
 * place in the file that was sent).
 */
export function sentTextOf(digest: { text: string | TextBytes; format: DocumentFormat; serialized?: true; convertedFrom?: unknown }): SentText | undefined {
  return digest.serialized || digest.convertedFrom ? undefined : { text: digest.text, format: digest.format }
}

export async function locateFindings(
  documents: DocumentProcessor, sent: SentText | undefined, findings: Finding[], tenant: Tenant | undefined,
): Promise<LocatedFinding[]> {
  if (!sent || findings.length === 0) return findings
  let positions
  try {
    ({ positions } = await documents.locate({ ...sent, paths: findings.map((f) => f.path) }, tenant))
  } catch (err) {
    // The positions help; a worker that failed to place them (busy past the time limit, shutting
    // down) must not turn the findings themselves into an error.
    if (err instanceof RegistryError) return findings
    throw err
  }
  return findings.map((f, i) => ({ ...f, ...positions[i] }))
}
