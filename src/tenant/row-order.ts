/**
 * Row ids for the tenant's lists, which page by rowid (newest first, a cursor is the last rowid
 * shown). SQLite gives a new row max(rowid) + 1, so once the newest rows were deleted a new row
 * took a rowid below a cursor already handed out, and showed on the next page as if it were older.
 * A mark of the highest rowid ever given keeps new rows above every cursor.
 */
export class RowOrder {
  constructor(private readonly sql: SqlStorage) {
    sql.exec(`CREATE TABLE IF NOT EXISTS row_marks (name TEXT PRIMARY KEY, last INTEGER NOT NULL)`);
  }

  /** The rowid for the next row of `table`: above every rowid it ever gave (marks start at the table's highest). */
  next(table: "sessions" | "workspaces"): number {
    const next = this.sql
      .exec<{ n: number }>(
        `SELECT MAX(IFNULL((SELECT last FROM row_marks WHERE name = ?), 0), IFNULL((SELECT MAX(rowid) FROM ${table}), 0)) + 1 AS n`,
        table,
      )
      .one().n;
    this.sql.exec(`INSERT OR REPLACE INTO row_marks (name, last) VALUES (?, ?)`, table, next);
    return next;
  }
}
