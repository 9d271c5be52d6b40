"""How the command-line scripts fail: one line on stderr and a non-zero exit, never a traceback."""
from __future__ import annotations

import sys
from collections.abc import Callable

from .corpus import CorpusError
from .index import BuildBusy, IndexLoadError, IndexSpecError

# failures a user can cause and fix; their messages already say what was wrong and where
EXPECTED_ERRORS: tuple[type[Exception], ...] = (CorpusError, IndexLoadError, IndexSpecError, BuildBusy,
                                                FileNotFoundError)


class UsageError(Exception):
    """A bad argument the parser could not see."""


def fail(message: str, code: int = 2) -> int:
    print(f"error: {message}", file=sys.stderr)
    return code


def run_guarded(main: Callable[[], int], expected: tuple[type[Exception], ...] = ()) -> int:
    """Run a command; expected failures (EXPECTED_ERRORS, `expected`, UsageError) become one line on
    stderr and exit 2."""
    try:
        return main()
    except EXPECTED_ERRORS + expected + (UsageError,) as e:
        return fail(str(e).splitlines()[0] if str(e) else e.__class__.__name__)
    except KeyboardInterrupt:
        return fail("interrupted", 130)
    except BrokenPipeError:
        return 0
    except MemoryError:
        return fail("out of memory")
    except OSError as e:
        return fail(f"{getattr(e, 'filename', '') or ''}: {e.strerror or e}".lstrip(": "))
