// A tree view as plain data, every node expanded: what a person would see with all of it open.
// The test API returns it, so host tests check the views as shown.
import type * as vscode from 'vscode';

export interface TreeSnapshot {
  id: string;
  label: string;
  description: string;
  contextValue: string;
  children: TreeSnapshot[];
}

export async function snapshotTree<T extends vscode.TreeItem>(provider: { getChildren(node?: T): Promise<T[]> }, node?: T, depth = 0): Promise<TreeSnapshot[]> {
  const out: TreeSnapshot[] = [];
  for (const child of await provider.getChildren(node)) {
    out.push({
      id: child.id ?? '',
      label: typeof child.label === 'string' ? child.label : (child.label?.label ?? ''),
      description: typeof child.description === 'string' ? child.description : '',
      contextValue: child.contextValue ?? '',
      children: depth < 5 ? await snapshotTree(provider, child, depth + 1) : [],
    });
  }
  return out;
}
