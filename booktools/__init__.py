"""The book's own machinery (Sphinx extensions and checks), kept apart from ``rnnlib``."""
