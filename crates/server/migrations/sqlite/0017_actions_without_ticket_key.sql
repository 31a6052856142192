-- Migration 17 is PostgreSQL's (migrations/postgres/0017_actions_without_ticket_key.sql):
-- it drops the foreign key from `actions` to `tickets`, whose check cost
-- a query and a row lock for every action there. SQLite keeps the key:
-- its one writer checks it in the page cache it already holds, and
-- dropping a key there means rebuilding the table.
SELECT 1;
