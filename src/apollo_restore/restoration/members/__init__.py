"""The ensemble's members (neural, unbounded-order, n-gram, the gap's own document, the length
prior), registered by name (:mod:`.registry`), and the ensemble that combines them."""
