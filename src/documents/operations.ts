/**
 * Where a path item keeps its operations: one member per fixed method (OpenAPI 3.2 adds `query`) and,
 * since 3.2, `additionalOperations` keyed by any other HTTP method (COPY, LINK …). The diff and the SDK
 * generators enumerate operations through this, so that a 3.2 document loses none.
 */
const FIXED_METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace', 'query']

export interface OperationMember {
  /** The HTTP method in lower case. */
  method: string
  /** The members from the path item to the Operation Object. */
  at: string[]
}

function isObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value)
}

/** The operations of a path item, fixed methods first, then the additional ones by name. */
export function operationMembers(item: unknown): OperationMember[] {
  if (!isObject(item)) return []
  const found: OperationMember[] = FIXED_METHODS.filter((method) => isObject(item[method])).map((method) => ({ method, at: [method] }))
  const additional = item.additionalOperations
  if (isObject(additional)) {
    for (const name of Object.keys(additional).sort()) {
      const method = name.toLowerCase()
      if (isObject(additional[name]) && !found.some((m) => m.method === method)) found.push({ method, at: ['additionalOperations', name] })
    }
  }
  return found
}
