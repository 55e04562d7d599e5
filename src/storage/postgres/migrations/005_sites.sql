-- Up Migration
-- Documentation sites (issue 6): an organization's sites, the domains they answer on (one site per
-- domain across the registry), the APIs they list and their guides. Records are kept whole in
-- `record`, as in 001; the columns and tables beside it are what the constraints and queries need.

CREATE TABLE sites (
  id text COLLATE "C" PRIMARY KEY,
  organization_id text COLLATE "C" NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
  slug text COLLATE "C" NOT NULL,
  name text COLLATE "C" NOT NULL,
  visibility text COLLATE "C" NOT NULL CHECK (visibility IN ('private', 'public')),
  record json NOT NULL,
  UNIQUE (organization_id, slug)
);
-- An organization's sites by name, ties by id (pages).
CREATE INDEX sites_by_name ON sites (organization_id, name, id);

-- Lowercase host names: a domain belongs to one site of the whole registry.
CREATE TABLE site_domains (
  domain text COLLATE "C" PRIMARY KEY CHECK (domain = lower(domain)),
  site_id text COLLATE "C" NOT NULL REFERENCES sites (id) ON DELETE CASCADE
);
CREATE INDEX site_domains_by_site ON site_domains (site_id);

-- The APIs a site lists (its record's `api_ids`), by API: an API's delete drops it from these sites
-- first (SiteStore.dropApi, in the delete's transaction). The reference to the resource is checked at
-- commit, so a transaction may remove the API and update the sites in either order, but never leave
-- a site listing an API that is gone.
CREATE TABLE site_apis (
  api_id text COLLATE "C" NOT NULL REFERENCES resources (id) DEFERRABLE INITIALLY DEFERRED,
  site_id text COLLATE "C" NOT NULL REFERENCES sites (id) ON DELETE CASCADE,
  PRIMARY KEY (api_id, site_id)
);
CREATE INDEX site_apis_by_site ON site_apis (site_id);

-- A site's guides, keyed by slug within the site and listed by position, then slug; they go with their site.
CREATE TABLE site_guides (
  site_id text COLLATE "C" NOT NULL REFERENCES sites (id) ON DELETE CASCADE,
  slug text COLLATE "C" NOT NULL,
  id text COLLATE "C" NOT NULL,
  position integer NOT NULL CHECK (position >= 0),
  record json NOT NULL,
  PRIMARY KEY (site_id, slug)
);
CREATE INDEX site_guides_in_order ON site_guides (site_id, position, slug);
