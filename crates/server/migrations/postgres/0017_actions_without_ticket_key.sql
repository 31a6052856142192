-- A game action's row is written by the statement that moves its ticket's
-- game on (store/plan.rs: the `ticket_games` UPDATE guarded by the game's
-- seq, or its INSERT, in the same statement, all or nothing), and
-- `ticket_games.ticket_id` references `tickets`: the ticket is known to
-- exist whenever an action is written, and a ticket with a game is never
-- deleted (only the unsold tickets of a block never published are). The
-- foreign key from `actions` to `tickets` checked it again for every
-- action: a query of its own and a row lock on the ticket (FOR KEY SHARE),
-- one WAL record an action, on the busiest table of the game
-- (bench/pg-profile.sh: 0.93 of the 1.91 `Heap LOCK` records a request).
-- Its index stays: the primary key (ticket_id, seq).
ALTER TABLE actions DROP CONSTRAINT actions_ticket_id_fkey;

-- A game's row is rewritten by every action (its seq and state). With its
-- pages full, a new version of the row often found no room on its page:
-- PostgreSQL then wrote it elsewhere and added an entry to each of the
-- table's three indexes (bench/pg-profile.sh: 37 % of the updates were not
-- HOT). Pages filled to 80 % keep room for the row's next versions, so the
-- update stays on its page and writes no index entry (a HOT update) unless
-- it changes the phase. It applies to the pages written from now on.
ALTER TABLE ticket_games SET (fillfactor = 80);
