-- Up Migration
-- Results computed from content once and kept (issue 16): lint findings by ruleset version and document
-- checksums, diffs by method and the two documents' checksums. Pure functions of their keys, never changed.

CREATE TABLE lint_results (
  ruleset_checksum text COLLATE "C" NOT NULL,
  document_checksum text COLLATE "C" NOT NULL,
  findings json NOT NULL,
  PRIMARY KEY (ruleset_checksum, document_checksum)
);

CREATE TABLE diff_results (
  method text COLLATE "C" NOT NULL,
  from_checksum text COLLATE "C" NOT NULL,
  to_checksum text COLLATE "C" NOT NULL,
  result json NOT NULL,
  PRIMARY KEY (method, from_checksum, to_checksum)
);
