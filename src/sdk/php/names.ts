/** PHP identifiers from OpenAPI names: StudlyCase classes, camelCase methods and variables, never a reserved word. */

/** Words PHP refuses as class names (case-insensitive), and a few it reserves for the future. */
const RESERVED = new Set(`abstract and array as break callable case catch class clone const continue declare default do
echo else elseif empty enddeclare endfor endforeach endif endswitch endwhile enum eval exit extends final finally fn for
foreach function global goto if implements include include_once instanceof insteadof interface isset list match namespace
new or print private protected public readonly require require_once return static switch throw trait try unset use var
while xor yield bool int float string false true null void iterable object mixed never parent self resource numeric`
  .split(/\s+/))

/** Words of a name: split at non-alphanumerics and at lower→upper case changes. */
function words(name: string): string[] {
  return name
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .split(/[^A-Za-z0-9]+/)
    .filter(Boolean)
}

/** Words joined in StudlyCase; a leading digit gets `fallback` in front. */
function joinWords(name: string, fallback: string): string {
  const joined = words(name).map((w) => w[0].toUpperCase() + w.slice(1)).join('')
  return joined === '' ? fallback : /^[0-9]/.test(joined) ? `${fallback}${joined}` : joined
}

/** A class name: never a reserved word (`List` becomes `ListModel` with the fallback `Model`). */
export function studly(name: string, fallback = 'Item'): string {
  const safe = joinWords(name, fallback)
  return RESERVED.has(safe.toLowerCase()) ? `${safe}${fallback}` : safe
}

/** A method or variable name: reserved words are allowed there (PHP 7+), `$this` is not. */
export function camel(name: string, fallback = 'value'): string {
  const s = joinWords(name, fallback[0].toUpperCase() + fallback.slice(1))
  const result = s[0].toLowerCase() + s.slice(1)
  return result === 'this' ? 'thisValue' : result
}

/** Makes `wanted` unique among `taken` (adds 2, 3, …) and records it. */
export function unique(wanted: string, taken: Set<string>): string {
  let name = wanted
  for (let n = 2; taken.has(name.toLowerCase()); n++) name = `${wanted}${n}`
  taken.add(name.toLowerCase())
  return name
}

/** A single-quoted PHP string literal. */
export const phpString = (text: string): string => `'${text.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`

/** Text safe inside a `/** … *\/` doc comment, on one line. */
export const docText = (text: unknown): string =>
  typeof text === 'string' ? text.replace(/\*\//g, '*\\/').replace(/\s+/g, ' ').trim() : ''
