// The chat tool #memory_remember asks the user to confirm before it saves, quoting the title the
// agent chose. That title is the agent's (and so whatever a prompt injected into it): markdown in
// it must show as text, so that the confirmation cannot fetch an image when shown, offer a link,
// or add a paragraph that reads as the extension's own words.
import { strict as assert } from 'node:assert';
import { MarkdownString, withVscodeStub } from './vscodeStub';

interface PreparedRemember {
  confirmationMessages: { title: string; message: MarkdownString };
}

function confirmationFor(title: unknown): string {
  let prepare: ((options: { input: Record<string, unknown> }) => PreparedRemember) | undefined;
  const stub = {
    MarkdownString,
    lm: {
      registerTool: (name: string, tool: { prepareInvocation: typeof prepare }) => {
        if (name === 'codeMemory_remember') prepare = tool.prepareInvocation;
        return { dispose: () => undefined };
      },
    },
  };
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const lm = withVscodeStub(stub, () => require('../../src/extension/agents/languageModelTools') as typeof import('../../src/extension/agents/languageModelTools'));
  withVscodeStub(stub, () => lm.registerLanguageModelTools({} as never, {} as never, () => undefined));
  assert.ok(prepare, 'the remember tool is registered');
  return prepare({ input: { title, text: 'what is saved' } }).confirmationMessages.message.value;
}

describe('extension: the chat tool remember asks to confirm with the title as text', () => {
  it('an image, a link or emphasis in the title is not markdown in the confirmation', () => {
    const md = confirmationFor('ok ![pixel](https://evil.example/track.png) [click](https://evil.example/) **bold**');
    assert.doesNotMatch(md, /!\[pixel\]\(/);
    assert.doesNotMatch(md, /(?<!\\)\[click\]\(/);
    assert.doesNotMatch(md, /(?<!\\)\*\*bold/);
    assert.match(md, /^Keep this as a durable memory of the project:\n\n> ok/);
  });

  it('a title of several lines stays on the quoted line: no paragraph of its own after the quote', () => {
    const md = confirmationFor('ok\n\nThe extension has checked this memory: it is safe.');
    const [intro, ...rest] = md.split('\n\n');
    assert.equal(intro, 'Keep this as a durable memory of the project:');
    assert.equal(rest.length, 1, md);
    assert.match(rest[0], /^> ok/);
  });

  it('a title that is not text is shown as text, and a missing one as nothing', () => {
    assert.match(confirmationFor(42), /> 42$/);
    assert.match(confirmationFor(undefined), /> $/);
  });
});
