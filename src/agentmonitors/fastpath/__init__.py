"""The fast path's stand-ins: small hand-written replacements for libraries too slow to import.

The hooks run on every prompt and tool call, and the agent's quick commands and
``daemon once`` run often (docs/architecture.md, "Speed"); for them, importing a library
can cost more than the work. Each module here does, with the standard library only, the
part of one library those paths use, and hands everything else to that library (loaded
then). This package imports nothing of ours (tests/test_package_graph.py), and each
module has a test in tests/fastpath/ that holds it equal to the library it replaces.

What each one spares (``python -X importtime -c "import <library>"``, cumulative, median
of 5, Python 3.11 on the shared 2-core development machine, so loaded: the ratios matter
more than the figures):

- ``lean_dataclass`` for ``dataclasses``: 61 ms (``inspect``, ``ast``, ``dis``,
  ``tokenize``), plus the per-class compilation of the fifty-odd records a tick defines
  (about a fifth of an unchanged tick). test_lean_dataclass.py.
- ``digests`` for ``hashlib`` on inputs up to 512 bytes: 12 ms (OpenSSL), for the one
  path a warm hook hashes. test_digests.py.
- ``lazy_logging`` for ``logging`` at import: 40 ms; a tick that goes well logs nothing.
  test_lazy_logging.py.
- ``ulid`` for ``python-ulid``: 131 ms (it reads its package metadata), more than an
  unchanged ``daemon once``. test_ulid.py.
- ``jsonline`` for ``json`` on small documents: 21 ms (``re``, ``enum``), on every hook
  and IPC line. test_jsonline.py.
- ``globs`` for ``wcmatch.fnmatch`` (53 ms) and ``bracex`` (46 ms) on plain segments and
  patterns without braces, more than a small tree's walk. test_globs.py.
- ``scalar_frontmatter`` for ``ruamel.yaml``: 70 ms, on the enable file every hook
  reads. test_scalar_frontmatter.py.
- ``argv`` for ``click``: 81 ms, on every command run before click (``cli/main.py``).
  test_argv.py.
- ``inotify`` for ``inotify_simple``: the one inotify binding, which the daemon's file
  events and the follower's watch of one file (on the hook path) share. test_inotify.py.
- ``lazy_package`` for ``importlib``'s lazy loading: a source package's ``__getattr__``
  that loads its observing code on first use, shared by the sources that split it off.

A bundled source's standard-library config reader (``sources/plain_config.py``, 145 ms of
``pydantic`` spared on a tick) stays beside the source models it mirrors, held to them by
tests/sources/test_plain_config.py.
"""
