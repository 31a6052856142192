-- as-capone server schema, version 14 (issue 31): a player's account can
-- be recovered without e-mail, and closed. The PostgreSQL migration of
-- the same number makes the same change.
--
-- The argon2id hash (PHC string) of the account's recovery code, shown to
-- the player once (at sign-up with a login, or asked again with the
-- password): with the login it sets a new password (POST /api/recovery).
-- NULL: no code (an account without a login, or a closed one).
ALTER TABLE players ADD COLUMN recovery_hash TEXT;

-- When the player closed the account (POST /api/me/close): its login,
-- password and recovery hashes are removed and its tokens end; its
-- tickets, games and ledger movements are kept (docs/player-api.md
-- "Closing an account"). NULL: open.
ALTER TABLE players ADD COLUMN closed_ms BIGINT;
