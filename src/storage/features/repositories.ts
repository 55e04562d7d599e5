/**
 * The port's repositories section (issue 16): what the repositories feature reads and writes, inside a
 * transaction (`RepositoryStore`) or from the committed state (`RepositoryReader`). Being moved onto the port.
 */
export interface RepositoryReader {}

export interface RepositoryStore extends RepositoryReader {}
