-- as-capone server schema, version 18 (issue 28): the operator mode's
-- indexes that every purchase and every credit wrote, kept only for the
-- rows their queries look for. The PostgreSQL and SQLite migrations of this
-- number make the same change.
--
-- A purchase wrote its round into five indexes and moved it in one of them
-- when it settled; a credit's row moved in the outbox's index twice (its
-- claim, its acknowledgement). Three of those indexes are only ever
-- searched for the rounds and credits still open, a few hundred rows at
-- most, yet they held every row ever written: `wallet_rounds_player`
-- scattered each purchase over the index's leaves by player, one more page
-- to write (and checkpoint) for nearly every purchase. Partial indexes hold
-- the open rows only: a round enters them when its debit leaves and leaves
-- them when it settles, and a credit when it is owed until acknowledged.
-- The queries repeat each index's condition word for word
-- (store/wallet.rs), as SQLite needs to use a partial index.

-- Debits not settled and rollbacks not acknowledged, oldest first: the
-- worker's unanswered debits and the unresolved rounds' gauge.
DROP INDEX wallet_rounds_open;
CREATE INDEX wallet_rounds_unsettled ON wallet_rounds (state, created_ms)
    WHERE state IN ('debiting', 'rolling_back');

-- A purchase's Idempotency-Key whose round is still being settled.
DROP INDEX wallet_rounds_player;
CREATE INDEX wallet_rounds_pending ON wallet_rounds (player_id, idempotency_key)
    WHERE state IN ('debiting', 'rolling_back');

-- The outbox's entries owed, by when they are due.
DROP INDEX wallet_outbox_due;
CREATE INDEX wallet_outbox_due ON wallet_outbox (next_ms) WHERE acked_ms IS NULL;
