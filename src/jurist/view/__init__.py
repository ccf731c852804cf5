"""The run browser behind ``jurist view``: one page to read and compare what models wrote and judges said.

:mod:`collect` indexes run directories without reading their texts, :mod:`index` joins runs into rows and
builds each row's payload, :mod:`summary` the leaderboards, :mod:`page` writes the self-contained HTML
file and :mod:`server` serves the same page on 127.0.0.1 with payloads loaded on demand. Everything a model
or judge wrote is untrusted: the page builds its DOM from text nodes only (see ``assets/``).
"""
