-- as-capone server schema, version 23 (backups and restores): a database has an
-- identity, made once at random, that its copies (a backup, a standby, a
-- point-in-time recovery) keep. Each server records, outside the database
-- (`seen_file`), how far it saw the audit chain of each identity; a
-- database found behind that at a start went back in time, and is settled
-- as a restore (store/seen.rs, docs/backups.md "After a restore"). The
-- SQLite migration of this number makes the same change.
CREATE TABLE database_identity (
    one BIGINT PRIMARY KEY CHECK (one = 1),
    id  TEXT   NOT NULL
);
INSERT INTO database_identity (one, id) VALUES (1, md5(random()::text || clock_timestamp()::text));
