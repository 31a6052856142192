-- as-capone server schema, version 21 (backups and restores): a database knows it was
-- restored, and from when. `as-capone restore` writes a row here (from a
-- backup file, or `--recovered-by` after a point-in-time recovery or a
-- standby promoted behind); the next server start settles it before it
-- serves: every online block on sale at the point is withdrawn (its
-- unsold tickets are never sold: their seeds may have been revealed after
-- the point, by a game the restore forgot), an audit entry lists them, and
-- a new emission of the same table replaces them (docs/backups.md, "After
-- a restore"). The PostgreSQL migration of this number makes the same change.
CREATE TABLE restores (
    id              INTEGER PRIMARY KEY,
    point_ms        BIGINT  NOT NULL,  -- the newest event the restored database holds
    marked_ms       BIGINT  NOT NULL,  -- when `as-capone restore` marked it
    source          TEXT    NOT NULL,  -- the backup file, or how the database was recovered
    settled_ms      BIGINT,            -- when a server withdrew the blocks on sale
    withdrawn_json  TEXT,              -- those blocks: [{"emission", "block", "unsold"}]
    replaced_ms     BIGINT,            -- when their replacement was published
    replaced_json   TEXT,              -- the new emissions: [{"emission", "blocks", "replaces"}]
    CHECK (settled_ms IS NOT NULL OR replaced_ms IS NULL)
);

-- A withdrawn block is never on sale again; its sold tickets stay what they are.
ALTER TABLE blocks ADD COLUMN withdrawn_ms BIGINT;
