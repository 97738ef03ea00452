// The repositories of a store. `forProject(p)` hands out repositories confined to project p:
// scope is fixed when they are made (see ProjectTable), so no caller can forget it.

import { IDENTIFIER_TEXT } from '../../capture/prepare';
import { LexicalSegments } from '../lexicalSegments';
import { checkProject } from '../projectTable';
import type { IdAllocator } from '../ids';
import type { Store } from '../store';
import { CellRepository } from './cells';
import { GraphCache, GraphQueue, GraphRepository } from './graph';
import { MemoryRepository } from './memories';
import { ObservationRepository } from './observations';
import { PromptRepository } from './prompts';
import { RequestLogRepository } from './requestLog';
import { SummaryRepository } from './summaries';

export interface ProjectRepositories {
  readonly project: string;
  /** The repository's default branch as the project's callers last named it (Scope.defaultBranch), else null. */
  readonly defaultBranch: string | null;
  readonly cells: CellRepository;
  readonly observations: ObservationRepository;
  readonly summaries: SummaryRepository;
  readonly memories: MemoryRepository;
  readonly graph: GraphRepository;
  readonly prompts: PromptRepository;
  readonly requests: RequestLogRepository;
  readonly ids: IdAllocator;
}

export interface RepositoriesOptions {
  /** Called after cells were written (wakes the embedding queue, counts writes for maintenance). */
  onCellsWritten: () => void;
  duplicateWindowMs: number;
  log: (message: string) => void;
}

export class Repositories {
  readonly graphCache = new GraphCache();
  readonly graphQueue: GraphQueue;
  /** The store's full-text index segments (written by the maintenance-lease holder only). */
  readonly lexicalSegments: LexicalSegments;

  constructor(
    readonly store: Store,
    private readonly options: RepositoriesOptions,
  ) {
    this.lexicalSegments = new LexicalSegments(store);
    this.graphQueue = new GraphQueue(this, options.log);
  }

  get ids(): IdAllocator {
    return this.store.ids;
  }

  /**
   * A project's default branch, learned from the scopes that name it: a session this process ends
   * when idle (no caller's scope at hand) still knows what its project's default branch is.
   */
  private readonly defaultBranches = new Map<string, string>();

  /** `named`: the caller's Scope.defaultBranch, remembered for the project when it is a branch name. */
  forProject(project: string, named?: unknown): ProjectRepositories {
    checkProject(project);
    if (typeof named === 'string' && named && named.length <= 256 && IDENTIFIER_TEXT.test(named)) this.defaultBranches.set(project, named);
    const store = this.store;
    const cells = new CellRepository(store, project, this.options.onCellsWritten, this.lexicalSegments);
    const graph = new GraphRepository(store, project, this.graphCache);
    const defaultBranch = this.defaultBranches.get(project) ?? null;
    return {
      project,
      defaultBranch,
      cells,
      graph,
      observations: new ObservationRepository(store, project, cells, store.idsFor(project), this.options.duplicateWindowMs),
      summaries: new SummaryRepository(store, project, cells),
      memories: new MemoryRepository(store, project, cells, graph, defaultBranch),
      prompts: new PromptRepository(store, project),
      requests: new RequestLogRepository(store, project),
      ids: store.idsFor(project),
    };
  }
}
