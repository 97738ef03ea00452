import * as vscode from 'vscode';
import { MAX_MEMORY_TEXT_CHARS, codePoints } from '../../core/model/limits';
import type { Memory, Scope } from '../../core/model/records';
import type { CommandDefinition, Container } from '../container';
import { ConflictNode } from '../views/nodes';

// The review of a possible conflict in the Memories view: keep both memories, mark one
// superseded by the other, or edit one. Each choice is recorded on both memories. Tests and
// other callers may pass the pair and the choice instead of a tree node and a picker.

export interface ConflictTarget {
  scope: Scope;
  older: number;
  newer: number;
}

function targetOf(arg: unknown): ConflictTarget | undefined {
  if (arg instanceof ConflictNode) return { scope: arg.scope, older: arg.older.id, newer: arg.newer.id };
  const t = arg as Partial<ConflictTarget> | undefined;
  if (t && typeof t === 'object' && t.scope && typeof t.older === 'number' && typeof t.newer === 'number') return { scope: t.scope, older: t.older, newer: t.newer };
  return undefined;
}

async function sides(c: Container, t: ConflictTarget): Promise<[Memory, Memory]> {
  const engine = await c.engines.get();
  const found = await engine.getMemories([t.older, t.newer], t.scope, { includeSuppressed: true });
  const older = found.find((m) => m.id === t.older);
  const newer = found.find((m) => m.id === t.newer);
  if (!older || !newer) throw new Error(`memory ${older ? t.newer : t.older} is no longer in the store; refresh the Memories view`);
  return [older, newer];
}

async function pickSide(c: Container, t: ConflictTarget, placeHolder: string, label: (m: Memory) => string): Promise<Memory | undefined> {
  const [older, newer] = await sides(c, t);
  const picked = await vscode.window.showQuickPick(
    [newer, older].map((m) => ({ label: label(m), description: `memory ${m.id} · ${new Date(m.created_at_epoch).toLocaleDateString()}`, detail: m.text, memory: m })),
    { placeHolder, matchOnDetail: true },
  );
  return picked?.memory;
}

function tooLong(length: number): string {
  return `The text is ${length.toLocaleString('en-US')} characters; a memory holds at most ${MAX_MEMORY_TEXT_CHARS.toLocaleString('en-US')}. Keep what is worth remembering.`;
}

function done(message: string): void {
  void vscode.window.setStatusBarMessage(message, 4000);
}

export function keepBothMemoriesCommand(c: Container): CommandDefinition {
  return {
    id: 'codeMemory.keepBothMemories',
    changesStore: true,
    run: async (arg: unknown) => {
      const t = targetOf(arg);
      if (!t) return undefined;
      const engine = await c.engines.get();
      const result = await engine.resolveConflict(t.scope, t.older, t.newer, 'keep_both');
      done(`Kept memories ${t.newer} and ${t.older}: both hold`);
      return result;
    },
  };
}

export function markMemorySupersededCommand(c: Container): CommandDefinition {
  return {
    id: 'codeMemory.markMemorySuperseded',
    changesStore: true,
    run: async (arg: unknown, options?: { superseded?: number }) => {
      const t = targetOf(arg);
      if (!t) return undefined;
      let superseded = options?.superseded;
      if (superseded === undefined) {
        const picked = await pickSide(c, t, 'Which memory no longer holds?', (m) => `${m.title} is superseded`);
        if (!picked) return undefined;
        superseded = picked.id;
      }
      if (superseded !== t.older && superseded !== t.newer) throw new Error(`memory ${superseded} is not a side of this conflict`);
      const by = superseded === t.older ? t.newer : t.older;
      const engine = await c.engines.get();
      const result = await engine.resolveConflict(t.scope, superseded, by, 'superseded');
      done(`Memory ${superseded} is now history, superseded by memory ${by}`);
      return result;
    },
  };
}

export function editConflictingMemoryCommand(c: Container): CommandDefinition {
  return {
    id: 'codeMemory.editConflictingMemory',
    changesStore: true,
    run: async (arg: unknown, options?: { id?: number; text?: string }) => {
      const t = targetOf(arg);
      if (!t) return undefined;
      let memory: Memory | undefined;
      if (options?.id !== undefined) memory = (await sides(c, t)).find((m) => m.id === options.id);
      else memory = await pickSide(c, t, 'Which memory do you want to edit?', (m) => m.title);
      if (!memory) return undefined;
      const text = options?.text ?? (await vscode.window.showInputBox({ title: `Edit memory ${memory.id}: ${memory.title}`, value: memory.text, prompt: 'What the memory should say; the conflict is then marked as reviewed.', validateInput: (v) => (!v.trim() ? 'A memory needs a text' : codePoints(v) > MAX_MEMORY_TEXT_CHARS ? tooLong(codePoints(v)) : undefined) }));
      if (text === undefined) return undefined;
      // As Remember Selection and Add Note: a memory holds at most what the remember tool keeps; refused, not cut.
      if (codePoints(text) > MAX_MEMORY_TEXT_CHARS) {
        void vscode.window.showWarningMessage(tooLong(codePoints(text)));
        return undefined;
      }
      const engine = await c.engines.get();
      const result = await engine.editMemory(t.scope, memory.id, { text });
      done(`Edited memory ${memory.id}`);
      return result;
    },
  };
}
