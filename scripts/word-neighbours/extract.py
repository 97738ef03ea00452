"""Plain text of documentation folders (HTML, gzipped HTML, text, Markdown, reStructuredText, POD).

python3 extract.py OUT.txt DIR... : one file's text after another, paragraphs kept apart by blank
lines. Folders of the evaluation sets' projects and generated API listings are left out.
"""
import gzip
import os
import sys
from html.parser import HTMLParser

SKIP = ('flask', 'werkzeug', 'jinja', 'itsdangerous', 'markupsafe', 'yargs', '_sources', '_static', '/search',
        # Rust's generated API pages: a few words each, repeated tens of thousands of times.
        '/rust-doc/html/core', '/rust-doc/html/std', '/rust-doc/html/alloc', '/rust-doc/html/src',
        '/rust-doc/html/unstable-book', '/rust-doc/html/proc_macro', '/rust-doc/html/test')
BLOCKS = ('p', 'div', 'li', 'h1', 'h2', 'h3', 'h4', 'pre', 'tr', 'dt', 'dd', 'br')


class Text(HTMLParser):
    def __init__(self):
        super().__init__()
        self.out = []
        self.skip = 0

    def handle_starttag(self, tag, attrs):
        if tag in ('script', 'style', 'nav'):
            self.skip += 1
        if tag in BLOCKS:
            self.out.append('\n')

    def handle_endtag(self, tag):
        if tag in ('script', 'style', 'nav') and self.skip:
            self.skip -= 1
        if tag in ('p', 'div', 'li', 'pre', 'dt', 'dd'):
            self.out.append('\n')

    def handle_data(self, data):
        if not self.skip:
            self.out.append(data)


def read(path):
    opener = gzip.open if path.endswith('.gz') else open
    with opener(path, 'rt', errors='ignore') as f:
        return f.read()


def text_of(path):
    name = path[:-3] if path.endswith('.gz') else path
    if name.endswith(('.html', '.htm')):
        parser = Text()
        parser.feed(read(path))
        return ''.join(parser.out)
    if name.endswith(('.txt', '.md', '.rst', '.pod')):
        return read(path)
    return None


def main():
    out = open(sys.argv[1], 'w')
    seen = set()
    files = 0
    for root in sys.argv[2:]:
        for folder, _, names in os.walk(root, followlinks=True):
            real = os.path.realpath(folder)
            if real in seen or any(s in folder.lower() for s in SKIP):
                continue
            seen.add(real)
            for name in names:
                try:
                    text = text_of(os.path.join(folder, name))
                except (OSError, EOFError):
                    continue
                if text:
                    out.write(text)
                    out.write('\n\n')
                    files += 1
    print(f'{files} files', file=sys.stderr)


main()
