// The one renderer for SQL templates (sql/ddl/, sql/etl/, sql/checks/). A placeholder is `{{name}}`
// (letters, digits, `_` and `.`); every value is SQL text ready to paste — a quoted literal, a
// type, an engine clause — so the SQL files read as SQL. ClickHouse's own `{shard}`/`{replica}`
// macros use single braces and pass through untouched. Placeholders do not belong in comments: a
// multi-line value would break out of a `--` comment.

export type TemplateValues = Readonly<Record<string, string>>;

const PLACEHOLDER = /\{\{\s*([A-Za-z0-9_.]+)\s*\}\}/g;

export class SqlTemplateError extends Error {
  constructor(
    readonly file: string,
    readonly placeholder: string,
    message: string,
  ) {
    super(message);
    this.name = "SqlTemplateError";
  }
}

/** Replaces every `{{name}}`; an unknown name or a stray `{{` is an error naming the file and line. */
export function renderTemplate(text: string, values: TemplateValues, file: string, firstLine = 1): string {
  const rendered = text.replace(PLACEHOLDER, (match, name: string, offset: number) => {
    const value = values[name];
    if (value === undefined) {
      const line = firstLine + (text.slice(0, offset).match(/\n/g)?.length ?? 0);
      throw new SqlTemplateError(file, name, `${file}:${line}: unknown placeholder ${match} (known: ${Object.keys(values).sort().join(", ")})`);
    }
    return value;
  });
  const stray = /\{\{|\}\}/.exec(text.replace(PLACEHOLDER, ""));
  if (stray) {
    const line = firstLine + (text.slice(0, stray.index).match(/\n/g)?.length ?? 0);
    throw new SqlTemplateError(file, stray[0], `${file}:${line}: malformed placeholder near '${stray[0]}'`);
  }
  return rendered;
}
