"""Shared helpers for the user-space DaxFS test suites.

env       -- where the repository, the Python bindings and the tools are;
             region creation (mkfs), fsck runs, unique region names.
procs     -- running several host processes (each its own daxfs.Region).
content   -- self-describing, deterministic file contents.
mh_workers, kill_workers -- worker functions run in child processes
             (they live in an importable module so that the 'spawn'
             start method can find them).
"""
