"""The wire formats and the transport: bytes out, ``json.loads`` in.

:mod:`~jurist.engine.wire.transport` speaks OpenAI chat completions over aiohttp (one session per endpoint
over a shared pool, :mod:`~jurist.engine.wire.connections`); :mod:`~jurist.engine.wire.anthropic`,
:mod:`~jurist.engine.wire.responses` and :mod:`~jurist.engine.wire.litellm` translate other APIs to and
from that shape; :mod:`~jurist.engine.wire.reply_parse` reads a reply (its fields checked by
:mod:`~jurist.engine.wire.reply_fields`, its size by :mod:`~jurist.engine.wire.reply_cap`);
:mod:`~jurist.engine.wire.sending` is the seam a client sends through (:class:`Transport`). What other
packages use is on :mod:`jurist.engine`'s face.
"""
