"""``python -m cli <command>`` (how ``tocsin run``, the Makefile and the tests start the processes)."""

from cli.main import main

if __name__ == "__main__":
    main()
