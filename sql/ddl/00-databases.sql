-- The application databases on every node. The DAG runner owns them: world_initialize creates
-- them here, world_recreate drops them (stg first, so the Kafka readers stop before the rest).
-- Applied as `lifecycle` from node 1; every file in sql/ddl/ is re-runnable (IF NOT EXISTS).

CREATE DATABASE IF NOT EXISTS stg ON CLUSTER {{cluster}};
CREATE DATABASE IF NOT EXISTS ods ON CLUSTER {{cluster}};
CREATE DATABASE IF NOT EXISTS dds ON CLUSTER {{cluster}};
CREATE DATABASE IF NOT EXISTS dm ON CLUSTER {{cluster}};
CREATE DATABASE IF NOT EXISTS dic ON CLUSTER {{cluster}};
