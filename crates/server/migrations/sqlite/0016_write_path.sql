-- A demo game's token finds its game, and only it (issue 31): the unique
-- index first written into migration 15 after that migration had been
-- applied by earlier builds, moved here so that their databases upgrade.
-- The rest of migration 16 is PostgreSQL's
-- (migrations/postgres/0016_write_path.sql): the function that aborts an
-- optimistic action's write, and the kept figures' helpers in PL/pgSQL.
-- SQLite has one writer, which checks each guarded statement itself
-- (store/sqlite), and keeps its figures with triggers of plain SQL.
CREATE UNIQUE INDEX IF NOT EXISTS demo_games_token ON demo_games (token_hash);
