-- as-capone server schema, version 19 (issue 28): fewer indexes written by
-- each purchase through the operator's wallet. The SQLite migration of this
-- number makes the same index change and also rebuilds `wallet_rounds` and
-- `wallet_outbox` WITHOUT ROWID (a SQLite table of rowids plus its text
-- key's index were two b-trees; a PostgreSQL table is its heap and its
-- primary key, as before). The tables' keys and constraints stay the same.
--
-- The two partial indexes of the rounds in flight (0018:
-- `wallet_rounds_unsettled` and `wallet_rounds_pending`, the same rows)
-- become one, `wallet_rounds_in_flight`: the worker's look for unanswered
-- debits and the gauge use its first columns; a purchase's
-- Idempotency-Key is found among the few rows in flight by its last ones.
-- A round entered and left both in its reservation and its settlement.

DROP INDEX wallet_rounds_unsettled;
DROP INDEX wallet_rounds_pending;
CREATE INDEX wallet_rounds_in_flight ON wallet_rounds (state, created_ms, player_id, idempotency_key)
    WHERE state IN ('debiting', 'rolling_back');
