-- as-capone server schema, version 5: a shop's sale or payment keeps the
-- answer the server gave, so that the same shop repeating the same request
-- (its answer was lost) gets it again, byte for byte, and nothing is
-- written twice. The PostgreSQL migration of the same number makes the same
-- table, columns and constraints.

-- One row per paper ticket and operation, written in the transaction of
-- the sale or the payment it answers. The shop that made the request is the
-- ticket's seller (`tickets.shop`) or payer (`tickets.paid_shop`).
-- Tickets sold or paid before this version have no row: a repeated request
-- for them is refused as before (409).
CREATE TABLE retail_answers (
    ticket_id    BIGINT  NOT NULL REFERENCES tickets(id),
    operation    TEXT    NOT NULL CHECK (operation IN ('sell', 'pay')),
    shop         TEXT    NOT NULL,
    answer_json  TEXT    NOT NULL,   -- the answer's bytes, returned again on a retry
    created_ms   BIGINT  NOT NULL,
    PRIMARY KEY (ticket_id, operation)
);
