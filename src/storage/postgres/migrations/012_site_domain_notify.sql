-- Up Migration
-- The domain stamp (010) also announces itself: the trigger that raises it sends a notification on
-- `site_domains_changed`, delivered at commit to every replica that listens (change-notices.ts). A
-- replica whose listening session is up routes by its map without reading the stamp per request, and
-- reads it again after a notification; with the session down it reads the stamp per request, as before.
-- PostgreSQL folds the identical notifications of one transaction into one.
CREATE OR REPLACE FUNCTION raise_site_domain_stamp() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  UPDATE site_domain_stamp SET stamp = stamp + 1;
  PERFORM pg_notify('site_domains_changed', '');
  RETURN NULL;
END
$$;
