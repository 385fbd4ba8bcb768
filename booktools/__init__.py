"""booktools: the machinery of the book (not imported by the chapters).

Each tool is a module run as ``python -m booktools.<tool>`` (the Makefile's targets);
ARCHITECTURE.md maps them. ``rnnlib`` is the theory library the chapters import;
this package only reads, executes, builds and checks the book.
"""
