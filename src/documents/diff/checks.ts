/**
 * The catalogue of checks the diff runs, and the class of each. A schema change is classified by the
 * side that reads the data: on the request side the server reads what clients send, so a schema that
 * accepts less breaks clients; on the response side clients read what the server sends, so a schema
 * that allows more (a new enum value, a property that may be missing or null) breaks them.
 * docs/changes.md shows this table; test/documents/diff-checks.test.ts has a test per check.
 */
export type Classification = 'breaking' | 'non-breaking' | 'annotation'

/**
 * Who reads the data a schema describes. `request`: the server (request bodies and parameters, and a
 * JSON Schema checked for backward compatibility: the new schema reads old data). `response`: the
 * client. `both`: inside `not`, `if`/`then`/`else` and the like, where the effect of a change cannot be
 * told: any change to what is accepted breaks. `unused`: a component no operation reaches.
 */
export type Side = 'request' | 'response' | 'both' | 'unused'

export interface Check {
  id: string
  /** What the check finds, for the table in docs/changes.md. */
  finds: string
  request: Classification
  response: Classification
}

const B = 'breaking' as const
const NB = 'non-breaking' as const
const A = 'annotation' as const

function check(id: string, finds: string, request: Classification, response: Classification = request): Check {
  return { id, finds, request, response }
}

export const CHECKS = {
  // Operations
  operationAdded: check('operation-added', 'an operation (method and path) was added', NB),
  operationRemoved: check('operation-removed', 'an operation was removed', B),
  deprecatedOperationRemoved: check('deprecated-operation-removed', 'an operation that was deprecated was removed', NB),
  operationDeprecated: check('operation-deprecated', 'an operation was marked deprecated (or no longer is)', NB),
  operationIdChanged: check('operation-id-changed', "an operation's operationId changed (generated SDKs rename the method)", NB),
  securityAdded: check('security-requirement-added', 'a way of authenticating that worked no longer does: security added to an open operation, a scheme or scope required on top, an alternative removed', B),
  securityRelaxed: check('security-requirement-relaxed', 'an operation accepts a new way of authenticating, or needs less', NB),
  // Parameters
  parameterAdded: check('request-parameter-added', 'an optional parameter was added', NB),
  requiredParameterAdded: check('required-request-parameter-added', 'a required parameter was added', B),
  parameterRemoved: check('request-parameter-removed', 'a parameter was removed (clients still send it)', B),
  deprecatedParameterRemoved: check('deprecated-request-parameter-removed', 'a parameter that was deprecated was removed', NB),
  parameterBecameRequired: check('request-parameter-became-required', 'a parameter became required', B),
  parameterBecameOptional: check('request-parameter-became-optional', 'a parameter became optional', NB),
  parameterSerializationChanged: check('request-parameter-serialization-changed', "a parameter's style, explode, allowReserved or content type changed", B),
  parameterDeprecated: check('request-parameter-deprecated', 'a parameter was marked deprecated (or no longer is)', NB),
  // Request bodies
  requestBodyAdded: check('request-body-added', 'an optional request body was added', NB),
  requiredRequestBodyAdded: check('required-request-body-added', 'a required request body was added', B),
  requestBodyRemoved: check('request-body-removed', 'the request body was removed (clients still send it)', B),
  requestBodyBecameRequired: check('request-body-became-required', 'the request body became required', B),
  requestBodyBecameOptional: check('request-body-became-optional', 'the request body became optional', NB),
  requestMediaTypeAdded: check('request-media-type-added', 'the request body accepts a new media type', NB),
  requestMediaTypeRemoved: check('request-media-type-removed', 'the request body no longer accepts a media type', B),
  // Responses
  responseAdded: check('response-status-added', 'a response status was added', NB),
  successResponseRemoved: check('success-response-removed', 'a success (2xx) response status was removed', B),
  responseRemoved: check('response-status-removed', 'a non-success response status (or default) was removed', NB),
  responseMediaTypeAdded: check('response-media-type-added', 'a response has a new media type (clients negotiate it)', NB),
  responseMediaTypeRemoved: check('response-media-type-removed', 'a response no longer has a media type', B),
  responseHeaderAdded: check('response-header-added', 'a response header was added', NB),
  responseHeaderRemoved: check('response-header-removed', 'a required response header was removed', B),
  optionalResponseHeaderRemoved: check('optional-response-header-removed', 'an optional response header was removed', NB),
  responseHeaderBecameOptional: check('response-header-became-optional', 'a response header is no longer required', B),
  responseHeaderBecameRequired: check('response-header-became-required', 'a response header became required', NB),
  // Schemas (classified by the side that reads them)
  typeChanged: check('type-changed', 'a type was replaced by an unrelated one (string to integer)', B),
  typeWidened: check('type-widened', 'a schema allows more types (a type added, integer to number, a type constraint removed)', NB, B),
  typeNarrowed: check('type-narrowed', 'a schema allows fewer types (a type removed, number to integer, a type constraint added)', B, NB),
  nullableAdded: check('nullable-added', 'a value may now be null', NB, B),
  nullableRemoved: check('nullable-removed', 'a value may no longer be null', B, NB),
  formatChanged: check('format-changed', 'a format was replaced by an unrelated one (date to date-time)', B),
  formatRelaxed: check('format-relaxed', 'a format was removed or widened (int32 to int64, float to double)', NB, B),
  formatTightened: check('format-tightened', 'a format was added or narrowed (int64 to int32)', B, NB),
  enumValueAdded: check('enum-value-added', 'an enum (or const) allows a new value', NB, B),
  enumValueRemoved: check('enum-value-removed', 'an enum (or const) no longer allows a value', B, NB),
  enumAdded: check('enum-added', 'a value became an enum (or const)', B, NB),
  enumRemoved: check('enum-removed', 'a value is no longer restricted to an enum (or const)', NB, B),
  constraintTightened: check('constraint-tightened', 'a limit was added or tightened: maximum, maxLength, maxItems, maxProperties lowered; minimum, minLength, minItems, minProperties raised; pattern, multipleOf, uniqueItems, items added', B, NB),
  constraintRelaxed: check('constraint-relaxed', 'a limit was removed or relaxed (the reverse of the above)', NB, B),
  constraintChanged: check('constraint-changed', 'a pattern or multipleOf was replaced by one that is neither stricter nor looser', B),
  propertyAdded: check('property-added', 'an optional property was added', NB),
  requiredPropertyAdded: check('required-property-added', 'a required property was added', B, NB),
  propertyRemoved: check('property-removed', 'a property was removed (on the response side a client reads it)', NB, B),
  closedPropertyRemoved: check('closed-property-removed', 'a property was removed from an object that allows no other properties (additionalProperties false): a client that sends it is refused', B),
  propertyBecameRequired: check('property-became-required', 'a property became required', B, NB),
  propertyBecameOptional: check('property-became-optional', 'a property is no longer required (on the response side it may be missing)', NB, B),
  additionalPropertiesNarrowed: check('additional-properties-narrowed', 'an object allows fewer other properties (additionalProperties false or a schema)', B, NB),
  additionalPropertiesWidened: check('additional-properties-widened', 'an object allows more other properties', NB, B),
  variantAdded: check('variant-added', 'a oneOf/anyOf alternative (or discriminator mapping) was added', NB, B),
  variantRemoved: check('variant-removed', 'a oneOf/anyOf alternative was removed', B, NB),
  allOfMemberAdded: check('all-of-member-added', 'an allOf member was added (the value must match one more schema)', B, NB),
  allOfMemberRemoved: check('all-of-member-removed', 'an allOf member was removed', NB, B),
  defaultChanged: check('default-changed', 'a default value was added, removed or changed (the server assumes another value when none is sent)', B, NB),
  discriminatorChanged: check('discriminator-changed', "a discriminator's property changed, or a mapping was removed or repointed", B),
  deprecated: check('deprecated', 'a schema or property was marked deprecated (or no longer is)', NB),
  accessChanged: check('access-changed', 'readOnly or writeOnly changed (the property is then added or removed on the side concerned)', NB),
  schemaChanged: check('schema-changed', 'a schema keyword the diff cannot judge changed (not, if/then/else, patternProperties, $schema, …): treated as breaking', B),
  // Whole document
  componentAdded: check('component-added', 'a component no operation uses (or a security scheme) was added', NB),
  componentRemoved: check('component-removed', 'a component no operation uses (or a security scheme) was removed; operations that used it report their own changes', NB),
  componentChanged: check('component-changed', 'a component no operation uses changed (schemas of no operation are compared keyword by keyword, every change non-breaking)', NB),
  securitySchemeChanged: check('security-scheme-changed', "a security scheme an operation uses changed how clients authenticate (type, header or query name, HTTP scheme, OAuth URLs or flows, a scope removed)", B),
  externalReferenceChanged: check('external-reference-changed', 'a $ref to a registry schema (or another document) changed; that schema has its own history and gate', NB),
  serversChanged: check('servers-changed', 'the servers list changed', NB),
  openapiVersionChanged: check('openapi-version-changed', 'the OpenAPI version of the document changed', NB),
  annotationChanged: check('annotation-changed', 'descriptions, summaries, titles, examples, tags, info, externalDocs, x- extensions', A),
} satisfies Record<string, Check>

export type CheckName = keyof typeof CHECKS

/** The class of a check on one side. */
export function classify(check: Check, side: Side): Classification {
  switch (side) {
    case 'request':
      return check.request
    case 'response':
      return check.response
    case 'both':
      return check.request === 'breaking' || check.response === 'breaking' ? 'breaking' : check.request
    case 'unused':
      return check.request === 'annotation' ? 'annotation' : 'non-breaking'
  }
}
