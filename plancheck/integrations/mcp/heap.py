"""One malloc arena for the proxy's threads.

The proxy reads, judges and writes each message on three threads, and a large message
(megabytes of arguments) is a few blocks its size, allocated by one thread and often freed by
another. glibc's malloc gives each thread an arena of its own and keeps a freed block for the
arena it came from, so each thread's arena grows to hold the largest messages. With a
policy and 1, 4 and 8 MB messages (`bench/bench_mcp_proxy.py --policy --sizes 1,4,8`), one
arena alone took the proxy's peak from 104 to 94 MB after 50 small calls; with the read
buffer and the encodings sized to the message (:mod:`.wire`, and provenance's
``argument_text``), 92 MB with it and 94 MB without, after 300 (the bound: twice the largest
message plus 80 MB, 96 MB). The threads take turns at Python's lock anyway, so they do not
wait on malloc's. (Mapping every large block on its own met the bound too, but each fresh
mapping is zeroed page by page: 30% more time a call at 8 MB.) Only glibc has the
setting; elsewhere nothing changes.
"""

from __future__ import annotations

import os

_M_ARENA_MAX = -8  # glibc's malloc.h


def one_arena() -> bool:
    """Have every thread started from now on allocate from the main arena; False where the
    C library is not glibc (or cannot be reached)."""
    try:
        if not os.confstr("CS_GNU_LIBC_VERSION"):
            return False
    except (ValueError, OSError):
        return False
    import ctypes

    try:
        mallopt = ctypes.CDLL(None).mallopt
    except (OSError, AttributeError):
        return False
    return bool(mallopt(_M_ARENA_MAX, 1))
