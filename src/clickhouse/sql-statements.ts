// Splits a SQL file into statements with dbgate-query-splitter, configured for ClickHouse's
// lexical rules (single-quoted strings with backslash escapes, backquoted and double-quoted
// identifiers, -- and /* */ comments), keeping where each statement starts so an error can say
// "statement 3 (line 42)". Comment-only chunks (a file's trailing notes) are not statements.
import { defaultSplitterOptions, splitQuery, type SplitterOptions } from "dbgate-query-splitter";

type SplitResultItem = ReturnType<typeof splitQuery>[number];

const clickhouseSplitterOptions: SplitterOptions = {
  ...defaultSplitterOptions,
  stringsBegins: ["'", "`", '"'],
  stringsEnds: { "'": "'", "`": "`", '"': '"' },
  stringEscapes: { "'": "\\", "`": "\\", '"': "\\" },
  returnRichInfo: true,
};

export interface SqlStatement {
  /** 1-based position of the statement in its file. */
  number: number;
  /** 1-based line of the file where the statement's first non-comment line is. */
  line: number;
  /** The statement without its leading comment lines and without the terminating semicolon. */
  text: string;
  /** The statement's first non-comment line, trimmed: what an error message quotes. */
  firstLine: string;
}

/** Drops leading blank and `--` comment lines; returns the rest and how many lines were dropped. */
function stripLeadingComments(text: string): { body: string; dropped: number } {
  const lines = text.split("\n");
  let dropped = 0;
  while (dropped < lines.length && /^\s*(--.*)?$/.test(lines[dropped] ?? "")) dropped++;
  return { body: lines.slice(dropped).join("\n").trim(), dropped };
}

function isOnlyComments(text: string): boolean {
  return text.replace(/\/\*[\s\S]*?\*\//g, "").replace(/--[^\n]*/g, "").trim() === "";
}

export function splitSqlStatements(sql: string): SqlStatement[] {
  const items: SplitResultItem[] = splitQuery(sql, clickhouseSplitterOptions);
  const statements: SqlStatement[] = [];
  for (const item of items) {
    if (typeof item === "string") throw new Error("dbgate-query-splitter returned plain strings although returnRichInfo is set");
    // item.start is where the chunk begins in the file (0-based line), right after the previous ';'
    const raw = sql.slice(item.start.position, item.end.position);
    if (isOnlyComments(raw)) continue;
    const { body, dropped } = stripLeadingComments(raw);
    statements.push({
      number: statements.length + 1,
      line: item.start.line + 1 + dropped,
      text: body.replace(/;\s*$/, ""),
      firstLine: body.split("\n")[0]?.trim() ?? "",
    });
  }
  return statements;
}
