-- as-capone server schema, version 22 (backups and restores): the audit log's entries
-- are sealed with the server key, and every movement of money is named by
-- one, so that a copy of the database changed outside as-capone (a
-- balanced fake movement, an entry added) is not believed
-- (store/audit.rs, docs/backups.md). Each entry written from now on holds
-- `mac`: HMAC-SHA256 under the server key `key_id` of the entry and, when
-- its change moved money, of that movement (`movement_id`) and its ledger
-- entries. `audit_head_seal`: the chain's last sealed entry (position and
-- hash) sealed the same way, rewritten with every seal, so that entries
-- removed and the chain hashed again show. `audit_keyed`: where that begins, the entries and movements
-- before it were written by an earlier version (not keyed). The
-- SQLite migration of this number makes the same change.
ALTER TABLE audit_log ADD COLUMN key_id BIGINT;
ALTER TABLE audit_log ADD COLUMN mac TEXT;
ALTER TABLE audit_log ADD COLUMN movement_id TEXT;

CREATE TABLE audit_keyed (
    one               BIGINT  PRIMARY KEY CHECK (one = 1),
    from_id           BIGINT  NOT NULL,  -- the first audit entry keyed
    movements_from_ms BIGINT  NOT NULL   -- movements from then on are each named by a keyed entry
);
INSERT INTO audit_keyed (one, from_id, movements_from_ms)
SELECT 1, COALESCE(MAX(id), 0) + 1,
       CASE WHEN EXISTS (SELECT 1 FROM movements) THEN CAST(EXTRACT(EPOCH FROM clock_timestamp()) * 1000 AS BIGINT) ELSE 0 END
  FROM audit_log;

CREATE TABLE audit_head_seal (
    one       BIGINT  PRIMARY KEY CHECK (one = 1),
    chain_pos BIGINT  NOT NULL,
    hash      TEXT    NOT NULL,
    key_id    BIGINT  NOT NULL,
    mac       TEXT    NOT NULL
);
