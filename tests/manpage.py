"""Reading man page sources and --help texts, for tests/test_man_pages.py.

A man page is parsed from its roff source: font escapes dropped, `\\-`
read as `-`, sections (.SH) and subsections (.SS) split out, and the
heads of its .TP items (the terms that an item defines) collected.
"""

import re

OPT_RE = re.compile(r"(?<![\w-])(--?[A-Za-z][\w-]*)")


def plain(line):
    """One roff line as text: escapes and font macros removed."""
    line = line.replace("\\-", "-").replace("\\(aq", "'")
    line = re.sub(r"\\f[BIRP]", "", line)
    line = re.sub(r"^\.(B|I|BR|BI|IR|RB|IB|RI)\s+", "", line)
    # alternating-font macros keep words apart with quotes: drop them
    return line.replace('"', "")


class ManPage:
    def __init__(self, path):
        self.sections = {}	# "OPTIONS" -> list of source lines
        self.subsections = {}	# (section, name) -> list of source lines
        sec = sub = None
        with open(path) as f:
            for line in f.read().splitlines():
                if line.startswith(".SH "):
                    sec, sub = line[4:].strip().strip('"'), None
                    self.sections[sec] = []
                elif line.startswith(".SS "):
                    sub = line[4:].strip().strip('"')
                    self.subsections[(sec, sub)] = []
                elif sec is not None:
                    self.sections[sec].append(line)
                    if sub is not None:
                        self.subsections[(sec, sub)].append(line)

    @staticmethod
    def heads(lines):
        """The plain text of each .TP item's head line."""
        return [plain(lines[i + 1]) for i, line in enumerate(lines[:-1])
                if line.startswith(".TP")]

    @staticmethod
    def text(lines):
        return "\n".join(plain(line) for line in lines if not line.startswith(".\\\""))


def options(text):
    """The option words (-x, --long) in a text."""
    return set(OPT_RE.findall(text))


def head_options(heads):
    """The options that .TP heads define."""
    out = set()
    for h in heads:
        out |= options(h)
    return out


def head_words(heads):
    """Mount-option names of .TP heads: 'a=X, b (default), c' -> a, b, c."""
    out = set()
    for h in heads:
        for w in h.replace("(default)", "").split(","):
            w = w.strip().split("=")[0].strip()
            if w:
                out.add(w)
    return out


def help_commands(text):
    """Subcommands of a `Commands:` block: the first word of each line."""
    block = text.split("Commands:", 1)[1].split("\n\n", 1)[0]
    return {line.split()[0] for line in block.splitlines() if line.strip()}


def help_section(text, title):
    """The lines of a help text from `title` to the next blank line."""
    return text.split(title, 1)[1].split("\n\n", 1)[0]


def expand_alternatives(name):
    """'[no_]splice_read/write' -> splice_read, no_splice_read, splice_write, ..."""
    neg = name.startswith("[no_]")
    name = name[len("[no_]"):] if neg else name
    first, *rest = name.split("/")
    stem = first.rsplit("_", 1)[0] + "_" if rest else ""
    names = [first] + [stem + r for r in rest]
    return set(names) | ({"no_" + n for n in names} if neg else set())


def fuse_mount_options(text):
    """The -o option names of daxfs-fuse --help."""
    block = text.split("comma separated):", 1)[1]
    out = set()
    for line in block.splitlines()[1:]:
        if line.lstrip().startswith("-"):
            break
        if not re.match(r"^  \S", line):
            continue		# a continuation line
        col = re.split(r"\s{2,}|:", line.strip(), maxsplit=1)[0]
        for w in col.replace("(default)", "").split(","):
            w = w.strip().split("=")[0]
            if w:
                out |= expand_alternatives(w)
    return out
