// The door of src/clickhouse/: what other rooms may import from it. Generated from their imports, then kept by hand;
// eslint refuses an import that goes past it (tests may open a room to test its insides).
export { clickhouseNodeConfig, connectClickHouse, createNodeClient } from "./client.ts";
export type { AccountKey, StandClickHouse } from "./client.ts";
export { CH_ERROR, ClickHouseStatementError, REFUSAL_CODES, clickhouseErrorCode, clickhouseServerCode } from "./errors.ts";
export { detectPlatform, platformForVersion } from "./platform.ts";
export type { Platform } from "./platform.ts";
export { querySqlFile, readSqlBody, readSqlFile, readSqlFragment, registeredSqlFiles, runSqlFile, usesPlaceholder } from "./sql-files.ts";
export type { FileReport, SqlFile } from "./sql-files.ts";
export { splitSqlStatements } from "./sql-statements.ts";
export type { SqlStatement } from "./sql-statements.ts";
export { SqlTemplateError, renderTemplate } from "./sql-template.ts";
export type { TemplateValues } from "./sql-template.ts";
export { quoteIdentifier, quoteString } from "./sql.ts";
