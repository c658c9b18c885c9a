"""Data layer: dataset registry and loaders (:mod:`.datasets`), seeded splits (:mod:`.splits`)
and dataset statistics (:mod:`.stats`).

Nothing is imported here so that ``import recmetrics.data`` stays cheap; import the submodules.
"""
