import t from 'tap'
import { commitMessage, metadataFile } from '../../src/domain/mirror/mirror-commits.js'
import type { ResourceRecord, VersionRecord } from '../../src/storage/registry-records.js'

const resource: ResourceRecord = {
  id: '01J00000000000000000000000', organization_id: '01J00000000000000000000001', kind: 'api', name: 'Petstore',
  slug: 'petstore', visibility: 'public', description: null, created_at: '2026-01-01T00:00:00.000Z',
  updated_at: '2026-01-02T00:00:00.000Z', last_number: 7, logo_url: null, ruleset_id: null, blocking_severity: null,
}
const version = (source: VersionRecord['source'], restored_from: string | null = null): VersionRecord => ({
  id: '01J00000000000000000000002', kind: 'api', resource_id: resource.id, organization_id: resource.organization_id,
  number: 7, checksum: `sha256:${'a'.repeat(64)}`, digest: 'b'.repeat(64), source, restored_from, size: 10, format: 'yaml',
  created_at: '2026-01-02T00:00:00.000Z',
})
const entry = (v: VersionRecord) => ({ change: 'version' as const, resource, version: v, seq: 1, organization_id: resource.organization_id, at: v.created_at })

t.test('commit messages name the change, and carry the version id and checksum as trailers', async (t) => {
  t.equal(commitMessage(entry(version('upload'))).split('\n')[0], 'apis/petstore: version 7 (upload)')
  t.equal(commitMessage(entry(version('github'))).split('\n')[0], 'apis/petstore: version 7 (sync)')
  t.equal(commitMessage(entry(version('gitlab'))).split('\n')[0], 'apis/petstore: version 7 (sync)')
  const restore = commitMessage(entry(version('restore', '01J00000000000000000000003')))
  t.match(restore, /^apis\/petstore: version 7 \(restore\)\n\n/)
  t.match(restore, /\nVersion-Id: 01J00000000000000000000002\nChecksum: sha256:a{64}\nSource: restore\nRestored-From: 01J00000000000000000000003\n$/)
})

t.test('metadata leaves out what changes with every version', async (t) => {
  const parsed = JSON.parse(metadataFile(resource))
  t.same(Object.keys(parsed), ['id', 'name', 'slug', 'visibility', 'description', 'logo_url', 'ruleset_id', 'blocking_severity', 'compatibility', 'created_at'])
  t.equal(metadataFile({ ...resource, updated_at: '2027-01-01T00:00:00.000Z', last_number: 9 }), metadataFile(resource))
})
