-- Up Migration
-- The git mirror's per-organization state (issue 5) and search's terms (issue 17), beside the journal
-- and the history that 001 made. Records are kept whole in `record`, as in 001; the columns beside it
-- are what the constraints and queries need. The git repositories themselves are not here: they are
-- derived from the history (a rebuild writes them again).

-- The commit an organization's `main` points at, written with the journal entries it applied.
CREATE TABLE mirror_heads (
  organization_id text COLLATE "C" PRIMARY KEY REFERENCES organizations (id) ON DELETE CASCADE,
  head_commit text COLLATE "C" NOT NULL CHECK (head_commit ~ '^[0-9a-f]{40}$'),
  record json NOT NULL,
  CHECK ((record ->> 'commit') = head_commit)
);

-- Where an organization's mirror is pushed (its token sealed in `record`, never served).
CREATE TABLE mirror_remotes (
  organization_id text COLLATE "C" PRIMARY KEY REFERENCES organizations (id) ON DELETE CASCADE,
  url text COLLATE "C" NOT NULL CHECK (url ~* '^https?://'),
  record json NOT NULL,
  CHECK ((record ->> 'url') = url)
);

-- What search finds in a document, by its checksum: a pure function of the content, never changed.
CREATE TABLE search_terms (
  checksum text COLLATE "C" PRIMARY KEY,
  terms json NOT NULL
);

-- The journal and the history keep what they were given: numbered from 1, the number in the entry the
-- row's own, and only the changes the mirror knows (a rebuild request is journaled, never kept).
ALTER TABLE mirror_journal
  ADD CHECK (seq >= 1),
  ADD CHECK ((entry ->> 'seq')::bigint = seq AND (entry ->> 'organization_id') = organization_id),
  ADD CHECK ((entry ->> 'change') IN ('create', 'update', 'delete', 'version', 'rebuild'));
ALTER TABLE mirror_history
  ADD CHECK (seq >= 1),
  ADD CHECK ((entry ->> 'seq')::bigint = seq),
  ADD CHECK ((entry ->> 'change') IN ('create', 'update', 'delete', 'version'));

-- An organization's pending entries (a rebuild drops them with the head it writes).
CREATE INDEX mirror_journal_by_organization ON mirror_journal (organization_id, seq);
-- The versions the history holds, for gc and verify: their blobs are kept for a rebuild.
CREATE INDEX mirror_history_versions ON mirror_history (organization_id, seq) WHERE (entry ->> 'change') = 'version';
