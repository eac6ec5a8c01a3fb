// Quoting for ClickHouse SQL text. 18.16's HTTP interface has no query parameters ({name:Type}
// arrived in 19.x), so values that must appear in SQL go through these two helpers and nothing else.

/** A backquoted identifier: database, table or column name. */
export function quoteIdentifier(name: string): string {
  return "`" + name.replace(/\\/g, "\\\\").replace(/`/g, "\\`") + "`";
}

/** A single-quoted string literal. */
export function quoteString(value: string): string {
  return "'" + value.replace(/\\/g, "\\\\").replace(/'/g, "\\'") + "'";
}
