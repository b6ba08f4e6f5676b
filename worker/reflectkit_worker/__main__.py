"""Entry point: `python -m reflectkit_worker` speaks the JSON-lines protocol on stdin/stdout."""

import sys

from .protocol import serve

if __name__ == "__main__":
    sys.exit(serve(sys.stdin, sys.stdout))
