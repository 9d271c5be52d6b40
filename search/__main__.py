import sys

from .cli import main, run_guarded

sys.exit(run_guarded(main))
