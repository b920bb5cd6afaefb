"""The man pages (man/) say what the programs' --help says, and render.

For each program, every option that --help shows is in the man page, and
every option that the page defines (its .TP items) is one --help shows.
daxfs(8) has a subsection for each command of `daxfs --help`, checked the
same way against `daxfs COMMAND --help`.  daxfs(5) lists every mount option
of daxfs.ko (its fs_parameter_spec in kernel/super.c) and of the FUSE mount
(`daxfs-fuse --help`), and nothing else.
"""

import re
import shutil
import subprocess
from pathlib import Path

import pytest

from manpage import (ManPage, fuse_mount_options, head_options, head_words,
                     help_commands, help_section, options)

ROOT = Path(__file__).resolve().parent.parent
BIN = ROOT / "build" / "bin"
MAN = ROOT / "man"
PAGES = ["mkfs.daxfs.8", "fsck.daxfs.8", "daxfs.8", "daxfs.5", "daxfs-fuse.8"]


def help_of(*argv):
    res = subprocess.run([str(BIN / argv[0]), *argv[1:], "--help"],
                         capture_output=True, text=True, timeout=30)
    assert res.returncode == 0, res.stderr
    return res.stdout


def assert_same_options(help_text, page_text, page_heads, what):
    in_help = options(help_text)
    missing = in_help - options(page_text)
    assert not missing, "%s: in --help, not in the man page: %s" % (what, missing)
    extra = head_options(page_heads) - in_help
    assert not extra, "%s: in the man page, not in --help: %s" % (what, extra)


@pytest.mark.parametrize("prog", ["mkfs.daxfs", "fsck.daxfs"])
def test_tool_page_matches_help(prog):
    page = ManPage(MAN / (prog + ".8"))
    opts = page.sections["OPTIONS"]
    text = ManPage.text(page.sections["SYNOPSIS"] + opts)
    assert_same_options(help_of(prog), text, ManPage.heads(opts), prog)


def test_fuse_page_matches_help():
    if not (BIN / "daxfs-fuse").exists():
        pytest.skip("daxfs-fuse not built (no libfuse3-dev)")
    page = ManPage(MAN / "daxfs-fuse.8")
    opts = page.sections["OPTIONS"]
    # the -o list of --help is daxfs(5)'s (test_daxfs5_lists_every_fuse_...)
    text = help_of("daxfs-fuse").split("comma separated):", 1)[0]
    assert_same_options(text, ManPage.text(page.sections["SYNOPSIS"] + opts),
                        ManPage.heads(opts), "daxfs-fuse")


def test_daxfs_page_has_every_command_and_option():
    page = ManPage(MAN / "daxfs.8")
    top = help_of("daxfs")
    opts = page.sections["OPTIONS"]
    assert_same_options(help_section(top, "Options:"), ManPage.text(opts),
                        ManPage.heads(opts), "daxfs")
    commands = help_commands(top)
    documented = {sub for (sec, sub) in page.subsections if sec == "COMMANDS"}
    assert commands == documented, (commands ^ documented)
    for cmd in sorted(commands):
        lines = page.subsections[("COMMANDS", cmd)]
        text = help_of("daxfs", cmd)
        # the global -r that a command's usage line repeats is in OPTIONS
        text = text.replace("daxfs [-r REGION]", "daxfs")
        assert_same_options(text, ManPage.text(lines), ManPage.heads(lines),
                            "daxfs " + cmd)


def section_options(page, title):
    return head_words(ManPage.heads(page.sections[title]))


def test_daxfs5_lists_every_kernel_mount_option():
    src = (ROOT / "kernel" / "super.c").read_text()
    spec = src.split("daxfs_param_spec[] = {", 1)[1].split("};", 1)[0]
    module = set(re.findall(r'fsparam_\w+\("(\w+)"', spec))
    assert module, "no fs_parameter_spec found in kernel/super.c"
    page = section_options(ManPage(MAN / "daxfs.5"), "KERNEL MOUNT OPTIONS")
    assert page == module | {"ro", "rw"}, page ^ (module | {"ro", "rw"})


def test_daxfs5_lists_every_fuse_mount_option():
    if not (BIN / "daxfs-fuse").exists():
        pytest.skip("daxfs-fuse not built (no libfuse3-dev)")
    fuse = fuse_mount_options(help_of("daxfs-fuse"))
    assert {"ro", "timeout", "poll_ms", "no_splice_move"} <= fuse
    page = section_options(ManPage(MAN / "daxfs.5"), "FUSE MOUNT OPTIONS")
    assert page == fuse, page ^ fuse


@pytest.mark.parametrize("name", PAGES)
def test_page_renders_without_warnings(name):
    assert shutil.which("man"), "man-db missing: run scripts/setup.sh"
    res = subprocess.run(["man", "--warnings", "-E", "UTF-8", "-l", "-Tutf8",
                          str(MAN / name)], capture_output=True, text=True,
                         timeout=60, env={"MANWIDTH": "80", "LC_ALL": "C.UTF-8",
                                          "PATH": "/usr/bin:/bin"})
    assert res.returncode == 0 and not res.stderr.strip(), res.stderr
    assert "DaxFS" in res.stdout or "daxfs" in res.stdout
