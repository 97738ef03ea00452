// The one place where scope is applied. Every repository reads and writes a project's rows
// through a ProjectTable: each `where` it runs starts with `project = <its project>`, and
// each row it writes is stamped with its project (a row that names another project is refused).
// Ids that clients or git choose (session ids, dedupe keys) are therefore keys within a
// project: the same session id in two projects names two sessions.

import { IDENTIFIER_TEXT } from '../capture/prepare';
import { redact } from '../capture/redact';
import { FilterError, sqlString } from './filters';
import type { TableName } from './schema';
import type { RecordBatch } from 'apache-arrow';
import type { Row, RowsOptions, Store } from './store';

export function checkProject(project: unknown): string {
  if (typeof project !== 'string' || project.length === 0) throw new FilterError('a scope needs a project name');
  if (project.length > 512) throw new FilterError('a project name is at most 512 characters');
  if (!IDENTIFIER_TEXT.test(project)) throw new FilterError(`a project name ${IDENTIFIER_TEXT.message}`);
  // Every row carries its project's name as it is: a name holding a secret would store the secret.
  if (redact(project) !== project) throw new FilterError('a project name must not hold a secret (a token, key or password): name the project without it');
  return project;
}

export class ProjectTable {
  private readonly prefix: string;

  constructor(
    private readonly store: Store,
    readonly name: TableName,
    readonly project: string,
  ) {
    this.prefix = `project = ${sqlString(checkProject(project))}`;
  }

  /** `clause` AND-ed after the project; callers' clauses never replace the scope. */
  where(clause?: string | null): string {
    return clause ? `${this.prefix} AND (${clause})` : this.prefix;
  }

  rows(clause: string | null, options: RowsOptions = {}): Promise<Row[]> {
    return this.store.rows(this.name, this.where(clause), options);
  }

  /** See Store.batches. */
  batches(clause: string | null, select: string[]): AsyncIterable<RecordBatch> {
    return this.store.batches(this.name, this.where(clause), select);
  }

  count(clause?: string | null): Promise<number> {
    return this.store.count(this.name, this.where(clause));
  }

  update(clause: string, values: Record<string, string>): Promise<void> {
    return this.store.update(this.name, this.where(clause), values);
  }

  delete(clause: string | null): Promise<number> {
    return this.store.delete(this.name, this.where(clause));
  }

  add(rows: Row[], key?: string): Promise<void> {
    return this.store.add(this.name, rows.map((r) => this.stamp(r)), key);
  }

  upsert(on: string | string[], rows: Row[]): Promise<number> {
    return this.store.upsert(this.name, on, rows.map((r) => this.stamp(r)));
  }

  private stamp(row: Row): Row {
    if (row.project !== undefined && row.project !== null && row.project !== this.project) {
      throw new FilterError(`a row of project '${String(row.project)}' cannot be written to project '${this.project}'`);
    }
    return row.project === this.project ? row : { ...row, project: this.project };
  }
}
