-- Up Migration
-- What /metrics counts without reading everything (port section `tallies`): rows only ever inserted
-- and summed when read, so that concurrent serializable uploads never conflict over a counter row.

CREATE TABLE tally_deltas (
  id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  name text COLLATE "C" NOT NULL CHECK (name IN ('versions-written', 'blobs-count', 'blobs-bytes')),
  kind text COLLATE "C",
  source text COLLATE "C",
  delta bigint NOT NULL,
  CHECK ((name = 'versions-written') = (kind IS NOT NULL AND source IS NOT NULL))
);
