"""The book's Sphinx extensions, loaded by ``sphinx.extra_extensions`` in ``_config.yml``."""
