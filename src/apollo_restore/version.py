"""The package's version (as ``pyproject.toml`` states it), for every layer to name in what it writes:
restorations, exports, attributions (``apollo_restore.__version__`` is this)."""

__version__ = "0.1.0"
