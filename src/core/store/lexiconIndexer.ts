// Writes the full-text index segments (the maintenance-lease holder only, from Maintenance):
// the rows no segment holds become a new small segment once there are enough of them; once a
// project has many small segments, their live documents and the delta are indexed again into
// full segments of SEGMENT_DOCS documents (the full ones kept as they are: at 1,000,000 cells
// indexing every row again took 100 s of CPU); a project whose segments hold many deleted rows
// is indexed again whole. Builds go a bounded chunk at a time, so the builder's memory stays
// bounded. Only small segments count towards the merge: a big project is many full segments,
// which counted would have it indexed again at every upkeep.

import type { Table } from '@lancedb/lancedb';
import { LexicalIndex } from '../retrieve/lexicalIndex';
import { lexiconFor } from '../retrieve/lexicon';
import { nodeIdBatches } from '../retrieve/rowReads';
import { sqlString } from './filters';
import { purgeRows } from './forget';
import { forgetMark, forgotSince } from './forgetMarks';
import { TABLES } from './schema';
import { BUILD_CHUNK_DOCS, SEGMENT_DOCS, SEGMENT_FORMAT, SegmentBuilder } from './lexicalSegments';
import type { LexicalSegments } from './lexicalSegments';

type Row = Record<string, unknown>;

export interface LexiconIndexOptions {
  /** Rows outside any segment before they are written as a new one. */
  minDelta: number;
  /** Small segments (below segmentDocs) of a project before they are merged into full ones. */
  maxSegments?: number;
  /** Documents per full segment (default SEGMENT_DOCS). */
  segmentDocs?: number;
  /** Documents indexed in memory at a time while a full segment is built (default BUILD_CHUNK_DOCS). */
  chunkDocs?: number;
  /** Share of a project's segment documents whose rows are gone before it is indexed again. */
  maxDeadShare?: number;
  /**
   * False: a project due to be indexed again (whole, or its small segments merged) is left as it
   * is and 'rebuild' returned, for a child process to do it (default true).
   */
  rebuildInPlace?: boolean;
}

export const DEFAULT_LEXICON_MIN_DELTA = 1000;

/**
 * Indexes one project's new rows; true when a new manifest was published, 'rebuild' when the
 * project is due to be indexed again and `rebuildInPlace` is false.
 */
export async function indexProjectLexicon(cells: Table, segments: LexicalSegments, project: string, options: LexiconIndexOptions): Promise<boolean | 'rebuild'> {
  const mark = await forgetMark(segments.store);
  const done = await indexProject(cells, segments, project, options);
  if (done === true && (await forgotSince(segments.store, mark, project))) {
    // Rows read before a forget (in any process) that ended before the segments were published:
    // they may hold the forgotten words. They go as a forget's do, and the project is searched
    // from its cells until the next upkeep indexes it again.
    await purgeRows(segments.store, TABLES.lexicalSegments, `project = ${sqlString(project)}`);
    await segments.sweepFiles();
    return false;
  }
  return done;
}

async function indexProject(cells: Table, segments: LexicalSegments, project: string, options: LexiconIndexOptions): Promise<boolean | 'rebuild'> {
  const manifest = await segments.manifest(project);
  await segments.collect(project, manifest);
  const where = `project = ${sqlString(project)}`;
  const inPlace = options.rebuildInPlace ?? true;
  const indexWhole = async (): Promise<boolean | 'rebuild'> => (inPlace ? publishBuilt(segments, project, [], await buildSegments(segments, project, projectRows(cells, where), options)) : 'rebuild');
  if (manifest.segments.length === 0) {
    // A project without segments is indexed from a stream of its rows, a segment at a time: the
    // view a search builds would first read the whole project into memory (at 1,000,000 cells,
    // 3 GB before the first segment was written).
    const rows = await cells.countRows(where);
    if (rows < Math.max(1, options.minDelta)) return false;
    return indexWhole();
  }
  const lexicon = lexiconFor(cells, segments, project);
  await lexicon.refresh();
  const shape = lexicon.shape;
  if (shape.liveDocs === 0) {
    await segments.publish(project, []);
    return true;
  }
  const enoughNew = shape.deltaDocs >= Math.max(1, options.minDelta);
  // Segments of an older format are read too, but cost more to read (format 1 postings were
  // four times the size): they are written again once.
  const outdated = shape.formats.some((f) => f < SEGMENT_FORMAT);
  const full = options.segmentDocs ?? SEGMENT_DOCS;
  const isSmall = shape.sizes.map((n) => n < full);
  const small = isSmall.filter(Boolean).length;
  if (outdated || shape.deadDocs > (options.maxDeadShare ?? 0.25) * shape.segmentDocs) {
    return indexWhole();
  }
  if (small >= (options.maxSegments ?? 8)) {
    if (!inPlace) return 'rebuild';
    // The small segments and the delta become full segments again; the full ones are kept as
    // they are. Their documents are read again from the cells (their newest text), after the kept
    // segments, so that a node both hold is found in the new one.
    const merged = shape.segments.filter((_, k) => isSmall[k]).flatMap((id) => lexicon.liveNodeIds(id));
    const nodeIds = [...merged, ...lexicon.deltaIndex.nodeIdList()];
    const kept = shape.segments.filter((_, k) => !isSmall[k]);
    return publishBuilt(segments, project, kept, await buildSegments(segments, project, nodeIdBatches(cells, nodeIds, where, ['node_id', 'search_text']), options));
  }
  // Few new rows: the delta in memory serves them.
  if (!enoughNew) return false;
  const id = await segments.write(project, lexicon.deltaIndex);
  if (!id) return false;
  await segments.publish(project, [...shape.segments, id]);
  return true;
}

async function publishBuilt(segments: LexicalSegments, project: string, kept: string[], built: string[]): Promise<boolean> {
  await segments.publish(project, [...kept, ...built]);
  return true;
}

/** A project's rows, node id and index text, as the table streams them. */
async function* projectRows(cells: Table, where: string): AsyncIterable<Row[]> {
  for await (const batch of cells.query().where(where).select(['node_id', 'search_text'])) yield batch.toArray() as Row[];
}

/**
 * Indexes rows into segments of about `segmentDocs` documents (a chunk more at most), each built
 * from in-memory indexes of `chunkDocs` at a time. Returns the ids of the segments written.
 */
async function buildSegments(segments: LexicalSegments, project: string, rows: AsyncIterable<Row[]>, options: LexiconIndexOptions): Promise<string[]> {
  const segmentDocs = options.segmentDocs ?? SEGMENT_DOCS;
  const chunkDocs = options.chunkDocs ?? BUILD_CHUNK_DOCS;
  const ids: string[] = [];
  let chunk = new LexicalIndex();
  let segment = new SegmentBuilder();
  // The chunk joins the segment; a full segment is written.
  const fold = async (last: boolean): Promise<void> => {
    segment.add(chunk);
    chunk = new LexicalIndex();
    if (segment.size < segmentDocs && !last) return;
    const id = await segments.write(project, segment);
    if (id) ids.push(id);
    segment = new SegmentBuilder();
  };
  for await (const batch of rows) {
    for (const r of batch) {
      chunk.add(String(r.node_id), String(r.search_text ?? ''));
      if (chunk.size >= chunkDocs) await fold(false);
    }
  }
  await fold(true);
  return ids;
}
