-- A shop's day (GET /api/retail/report, docs/shops.md): the paper tickets
-- a shop sold in a period and the prizes it paid, read by shop and time so
-- that a report reads that shop's rows of that day and no one else's.
-- Online tickets have no shop: left out of both indexes.
CREATE INDEX tickets_shop_sold ON tickets (shop, sold_ms) WHERE shop IS NOT NULL;
CREATE INDEX tickets_shop_paid ON tickets (paid_shop, paid_ms) WHERE paid_shop IS NOT NULL;
