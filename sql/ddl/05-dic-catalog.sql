-- dic.products: the product catalog from data/catalog/products.csv (180 SKUs, price in kopecks).
--
-- 18.16 has no CREATE DICTIONARY, and its File engine and file() read only the node's own
-- user_files directory; so the catalog is a table with the whole CSV sent inline by this DDL
-- task (INSERT … FORMAT CSVWithNames, the same on 18.16 and on modern servers). The table is
-- replicated with one ZooKeeper path for ALL nodes ('all' instead of {shard}): each node holds a
-- full copy, so joins to the catalog stay local, and one insert on node 1 reaches both.
-- Re-running the file inserts the same block again, which replicated deduplication drops.

CREATE TABLE IF NOT EXISTS dic.products ON CLUSTER {{cluster}}
(
    sku String,
    name String,
    category {{platform.low_cardinality_string}},
    brand String,
    price Int64,
    demand UInt32
)
ENGINE = ReplicatedMergeTree('/clickhouse/tables/all/dic/products', '{replica}')
ORDER BY sku;

INSERT INTO dic.products (sku, name, category, brand, price, demand) FORMAT CSVWithNames
{{catalog.products_csv}};
