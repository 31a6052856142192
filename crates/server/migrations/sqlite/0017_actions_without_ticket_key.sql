-- Migration 17 is PostgreSQL's (migrations/postgres/0017_actions_without_ticket_key.sql):
-- it drops the foreign key from `actions` to `tickets`, whose check cost
-- a query and a row lock for every action there, and leaves room in the
-- pages of `ticket_games` for each game's next versions. SQLite keeps the
-- key (its one writer checks it in the page cache it already holds, and
-- dropping a key there means rebuilding the table) and rewrites a row in
-- place: nothing to do here.
SELECT 1;
