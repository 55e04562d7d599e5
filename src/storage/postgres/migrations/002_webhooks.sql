-- Up Migration
-- Outbound events (issue 20): an organization's webhook endpoints, the events written in the
-- transaction of the change they report (the outbox), and each event's delivery to each endpoint.
-- Records are kept whole in `record`, as in 001; the columns beside it are what constraints and queries need.

CREATE TABLE webhook_endpoints (
  id text COLLATE "C" PRIMARY KEY,
  organization_id text COLLATE "C" NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
  record json NOT NULL
);
CREATE INDEX webhook_endpoints_by_organization ON webhook_endpoints (organization_id, id);

CREATE TABLE webhook_events (
  id text COLLATE "C" PRIMARY KEY,
  organization_id text COLLATE "C" NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
  record json NOT NULL
);

CREATE TABLE webhook_deliveries (
  id text COLLATE "C" PRIMARY KEY,
  endpoint_id text COLLATE "C" NOT NULL REFERENCES webhook_endpoints (id) ON DELETE CASCADE,
  event_id text COLLATE "C" NOT NULL REFERENCES webhook_events (id) ON DELETE CASCADE,
  -- ISO 8601 UTC times of one format sort as they compare: set while the delivery is pending.
  next_attempt_at text COLLATE "C",
  record json NOT NULL
);
CREATE INDEX webhook_deliveries_by_endpoint ON webhook_deliveries (endpoint_id, id);
CREATE INDEX webhook_deliveries_due ON webhook_deliveries (next_attempt_at, id) WHERE next_attempt_at IS NOT NULL;
