-- Migration 16 is PostgreSQL's (migrations/postgres/0016_write_path.sql):
-- the function that aborts an optimistic action's write when one of its
-- guards finds its row changed, and the kept figures' helpers in PL/pgSQL.
-- SQLite has one writer, which checks each guarded statement itself
-- (store/sqlite), and keeps its figures with triggers of plain SQL:
-- nothing to do here, but every migration is written for both databases.
SELECT 1;
