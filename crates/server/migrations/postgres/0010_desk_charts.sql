-- The desk's charts (GET /api/admin/emissions/{id}/sales and .../prizes,
-- docs/operating.md "The desk page"): an emission's sold tickets, read by
-- block and sale time, so that a chart reads the sold tickets of that
-- emission's blocks and no other row. Tickets not sold yet (no sale time)
-- are left out of the index.
CREATE INDEX tickets_block_sold ON tickets (block_id, sold_ms) WHERE sold_ms IS NOT NULL;
