/**
 * src/commands/registry.ts: the one table of commands, and every place that lists them (help in the
 * terminal and in Slack, the terminal's handlers, Slack's) agreeing with it. Every expectation is
 * derived from the table, so adding a command needs no change here.
 */
import { describe, expect, it } from 'vitest';
import { COMMAND_TABLE, commandsOf, usageOf } from '../../src/commands/registry.ts';
import { COMMANDS } from '../../src/slack/handlers/index.ts';
import { helpView } from '../../src/slack/views/help.ts';
import { TERMINAL_COMMANDS } from '../../src/terminal/cli.ts';
import { runRmq } from '../support/cli.ts';

const names = (entries: readonly { name: string }[]) => entries.map((e) => e.name);
const terminal = names(commandsOf('terminal'));
const slack = names(commandsOf('slack'));

/** The first word after the prefix of each usage line a help text shows. */
function listed(text: string, prefix: string): string[] {
  return [...text.matchAll(new RegExp(`^\\s*${prefix} (\\S+)`, 'gm'))].map((m) => m[1] ?? '');
}

const cli = (argv: string[]) => runRmq({}, argv);

describe('the command table', () => {
  it('has one entry per name, each usage line starting with its name', () => {
    expect(new Set(names(COMMAND_TABLE)).size).toBe(COMMAND_TABLE.length);
    for (const { name, usage } of COMMAND_TABLE) {
      expect(usage === name || usage.startsWith(`${name} `), usage).toBe(true);
      expect(usageOf(name)).toBe(usage);
    }
  });

  it('Slack answers every command, the terminal every one that is not Slack only', () => {
    expect(slack).toEqual(names(COMMAND_TABLE));
    expect(terminal).toEqual(names(COMMAND_TABLE.filter((e) => !e.slackOnly)));
    expect([...COMMANDS.keys()]).toEqual(slack);
    expect(Object.keys(TERMINAL_COMMANDS).sort()).toEqual([...terminal].sort());
  });

  it("Slack's help lists every command Slack answers, in the table's order, each section within Slack's limit", () => {
    const view = helpView('/rmq', new Set(COMMANDS.keys()));
    const texts = view.blocks.map((b) => (b as { text?: { text?: string } }).text?.text ?? '');
    const usage = texts.filter((t) => t.startsWith('```')).join('\n');
    expect(listed(usage, '/rmq')).toEqual(slack);
    for (const t of texts) expect(t.length).toBeLessThanOrEqual(3000);
  });

  it("the terminal's help lists every command it answers, and no Slack-only one", async () => {
    const help = await cli(['help']);
    expect(help.code).toBe(0);
    expect(listed(help.out, 'rmq')).toEqual(terminal);
    expect((await cli([])).out).toBe(help.out);
  });

  it.each(COMMAND_TABLE.filter((e) => e.slackOnly).map((e) => e.name))(
    'the terminal refuses the Slack-only %s as an unknown command, with its help',
    async (name) => {
      const r = await cli([name]);
      expect(r.code).toBe(2);
      expect(r.err).toContain(`Unknown command "${name}"`);
      expect(listed(r.err, 'rmq')).toEqual(terminal);
    },
  );
});
