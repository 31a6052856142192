-- as-capone server schema, version 4: one table for the counters of every
-- limit on guessing (docs/limits.md), in the database so that each limit
-- holds across server processes and restarts: wrong play codes per client
-- network and from everyone, login attempts per network and per account,
-- registrations per network. The PostgreSQL migration of the same number
-- makes the same table.
--
-- `bucket` names what is counted (`redeem:203.0.113.0/24`,
-- `login:account:ana`, ...); `count` is the attempts in the fixed window
-- that began at `window_start_ms`; `last_ms` is the last attempt admitted
-- where a back-off waits from it (logins of one account), else 0.
CREATE TABLE limit_counters (
    bucket          TEXT    PRIMARY KEY,
    window_start_ms BIGINT  NOT NULL,
    count           BIGINT  NOT NULL,
    last_ms         BIGINT  NOT NULL
);
-- Counters whose window is over are deleted once a minute (an attacker
-- with many networks would otherwise grow the table without end).
CREATE INDEX limit_counters_window ON limit_counters (window_start_ms);

-- The wrong play codes were counted per single address, before the code
-- was looked up (and taken back when it was right). Those counts are only
-- minutes long and keyed otherwise: they are not carried over.
DROP TABLE redeem_failures;
