/**
 * The port's sites section (issue 16): what the sites feature reads and writes, inside a
 * transaction (`SiteStore`) or from the committed state (`SiteReader`). Being moved onto the port.
 */
export interface SiteReader {}

export interface SiteStore extends SiteReader {}
