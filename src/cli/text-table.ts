/** A column of a plain-text table: its header, and whether its cells line up on the left (text) or the right (figures). */
export interface TextColumn {
  header: string;
  align?: "left" | "right";
}

const GAP = "  ";

/**
 * A table for a terminal: each column as wide as its widest cell or header; figures right-aligned under the right
 * edge of their header, text left-aligned under its left edge. Trailing spaces are trimmed; a missing cell is blank.
 */
export function textTable(columns: readonly TextColumn[], rows: readonly (readonly string[])[]): string[] {
  const widths = columns.map((column, i) => Math.max(column.header.length, ...rows.map((row) => (row[i] ?? "").length)));
  const line = (cells: readonly string[]) =>
    columns
      .map((column, i) => {
        const cell = cells[i] ?? "";
        const width = widths[i] as number;
        return (column.align ?? "right") === "left" ? cell.padEnd(width) : cell.padStart(width);
      })
      .join(GAP)
      .trimEnd();
  return [line(columns.map((c) => c.header)), ...rows.map(line)];
}
