-- Up Migration
-- Every replica keeps the domain → site map in memory (Fastify routes by Host synchronously) and must
-- see another replica's domain change on its next request: it reads this one-row stamp per request and
-- reads `site_domains` again only when the stamp moved. A row trigger raises it in the transaction
-- that changes the map, whatever the statement (a site's delete cascading to its domains included).

CREATE TABLE site_domain_stamp (
  only_row boolean PRIMARY KEY DEFAULT true CHECK (only_row),
  stamp bigint NOT NULL
);
INSERT INTO site_domain_stamp (stamp) VALUES (0);

CREATE FUNCTION raise_site_domain_stamp() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  UPDATE site_domain_stamp SET stamp = stamp + 1;
  RETURN NULL;
END
$$;

CREATE TRIGGER site_domains_changed AFTER INSERT OR UPDATE OR DELETE ON site_domains
  FOR EACH ROW EXECUTE FUNCTION raise_site_domain_stamp();
