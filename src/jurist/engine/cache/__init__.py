"""The request cache and what keys it: :mod:`~jurist.engine.cache.store` (the sqlite file, the key of a
request) and :mod:`~jurist.engine.cache.identity` (what answers at an endpoint, learned once: the key's
first part). What other packages use is on :mod:`jurist.engine`'s face.
"""
