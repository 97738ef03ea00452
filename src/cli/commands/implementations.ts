// Every command's implementation: the entry of the commands bundle (dist/cliCommands.js), which
// dist/cli.js loads only once a command is to run, so `--help` and usage errors never load the
// engine, LanceDB, the MCP SDK or the tokenizer.

import type { CommandImpl } from '../command';
import { exportCommand, forgetCommand, importCommand, importGitCommand, observeCommand } from './data';
import { doctorCommand } from './doctor';
import { evalCommand } from './evalCommand';
import { nodeCommand, searchCommand, statsCommand } from './read';
import { mcpCommand, serveCommand } from './servers';
import { shareCommand, teamCommand, unshareCommand } from './team';

export const COMMAND_IMPLS: CommandImpl[] = [
  mcpCommand,
  serveCommand,
  importGitCommand,
  observeCommand,
  nodeCommand,
  searchCommand,
  statsCommand,
  exportCommand,
  importCommand,
  forgetCommand,
  shareCommand,
  unshareCommand,
  teamCommand,
  doctorCommand,
  evalCommand,
];
