import * as path from 'node:path';
import * as vscode from 'vscode';
import type { CommandDefinition, Container } from '../container';
import type { AgentSnippet, AgentTarget } from '../agents/agentConfig';
import { agentSnippet, mergeMcpJson } from '../agents/agentConfig';
import { readConfig } from '../config';

interface TargetItem extends vscode.QuickPickItem {
  target: AgentTarget;
}

/** Config for agents outside VS Code: the bundled CLI over stdio, on the same store and project. */
export function copyAgentConfigurationCommand(c: Container): CommandDefinition {
  return {
    id: 'codeMemory.copyAgentConfiguration',
    run: async (options?: { target?: AgentTarget; write?: boolean }): Promise<AgentSnippet | undefined> => {
      if (c.scopes.folders().length === 0) {
        void vscode.window.showInformationMessage('Open a folder first: agent configuration is per project.');
        return undefined;
      }
      // The active file's project; in a window of several projects with none, the user picks one.
      const picked = await c.scopes.resolve(vscode.window.activeTextEditor?.document.uri, 'Copy the agent configuration of which project?');
      if (!picked) return undefined;
      const { scope, folder } = picked;
      const target =
        options?.target ??
        (
          await vscode.window.showQuickPick<TargetItem>(
            [
              { target: 'claude', label: 'Claude Code', description: '.mcp.json' },
              { target: 'cursor', label: 'Cursor', description: '.cursor/mcp.json' },
              { target: 'codex', label: 'Codex', description: '~/.codex/config.toml' },
              { target: 'stdio', label: 'Any MCP client (stdio)', description: 'command line and JSON' },
            ],
            { title: 'Copy Agent Configuration for…' },
          )
        )?.target;
      if (!target) return undefined;
      const snippet = agentSnippet(target, {
        runtime: process.execPath,
        cliPath: path.join(c.context.extensionUri.fsPath, 'dist', 'cli.js'),
        storeUri: c.engines.storeUri,
        project: scope.project,
        settings: readConfig(),
      });
      await vscode.env.clipboard.writeText(snippet.text);
      if (snippet.workspaceFile) {
        const write =
          options?.write ??
          (await vscode.window.showInformationMessage(`${snippet.title} configuration copied. Also add it to ${snippet.workspaceFile} in ${folder.name}?`, 'Add to File', 'Just Copy')) === 'Add to File';
        if (write) {
          const uri = vscode.Uri.joinPath(folder.uri, ...snippet.workspaceFile.split('/'));
          let existing: string | undefined;
          try {
            existing = new TextDecoder().decode(await vscode.workspace.fs.readFile(uri));
          } catch {
            existing = undefined;
          }
          await vscode.workspace.fs.writeFile(uri, new TextEncoder().encode(mergeMcpJson(existing, snippet.text, snippet.workspaceFile)));
          if (options?.write === undefined) await vscode.window.showTextDocument(uri, { preview: true });
          return snippet;
        }
      }
      // Shown whenever a person asked (the palette, or a walkthrough link naming the agent); a
      // caller that says whether to write the file gets the snippet back and nothing opens.
      if (options?.write === undefined) {
        const doc = await vscode.workspace.openTextDocument({ content: `${comment(snippet)}\n${snippet.text}`, language: snippet.language === 'toml' ? 'toml' : snippet.language === 'json' ? 'jsonc' : 'shellscript' });
        await vscode.window.showTextDocument(doc, { preview: true });
        void vscode.window.setStatusBarMessage(`${snippet.title} configuration copied to the clipboard`, 4000);
      }
      return snippet;
    },
  };
}

function comment(s: AgentSnippet): string {
  const mark = s.language === 'json' ? '//' : '#';
  return `${mark} Code Memory for ${s.title}: put this in ${s.location}.\n${mark} It runs the CLI bundled with the extension on the same store as VS Code (copied to the clipboard).`;
}
