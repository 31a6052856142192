-- as-capone server schema, version 9 (issue 30): large prizes go to the
-- operator, and an emission keeps its official notices. The PostgreSQL
-- migration of the same number makes the same change.

-- Art. 1: each emission is announced by an official notice (its reference,
-- e.g. the Journal officiel's), and its end by a closing notice whose date
-- starts the claim period (docs/shops.md "Claims and the payout ceiling").
-- Emissions made before this version have none: NULL.
ALTER TABLE emissions ADD COLUMN notice_ref TEXT;
ALTER TABLE emissions ADD COLUMN closing_notice_date TEXT;   -- YYYY-MM-DD, Paris calendar
ALTER TABLE emissions ADD COLUMN closing_notice_ref TEXT;

-- Where the operator's payment centre pays a prize above a shop's payout
-- ceiling: the prize moves from house:prizes to this account (double entry;
-- its balance is the sum of its entries, never stored).
INSERT INTO accounts (name, kind) VALUES ('house:payment_centre', 'house');

-- A paper prize paid by the operator's payment centre, once: the ticket's
-- row says paid (paid_ms set, paid_shop NULL), this row says how (the
-- payment's reference: cheque, transfer) and keeps the answer the desk got,
-- returned again to a retry with the same reference.
CREATE TABLE claim_payments (
    ticket_id    BIGINT  PRIMARY KEY REFERENCES tickets(id),
    reference    TEXT    NOT NULL,
    prize_cents  BIGINT  NOT NULL CHECK (prize_cents > 0),
    answer_json  TEXT    NOT NULL,
    paid_ms      BIGINT  NOT NULL
);

-- The desk's list of claims: the won tickets whose prize is above a
-- ceiling, read by prize from the few large ones, never by a scan of every
-- game (`prize_cents > 0 AND prize_cents > $1` uses it on both databases).
CREATE INDEX ticket_games_won ON ticket_games (prize_cents) WHERE prize_cents > 0;
