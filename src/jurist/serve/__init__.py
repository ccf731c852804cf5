"""``jurist serve reward``: a benchmark's exact judging protocol as an HTTP reward for RL trainers.

The service (:mod:`~jurist.serve.service`) judges each answer with the judge kind, prompts, reader, engine
and request cache ``jurist run`` uses, so a policy is trained on the reward it is later evaluated with;
the family says what the reward is (:func:`jurist.families.family_reward`, one ``reward.py`` in each
family's place), :mod:`~jurist.serve.shapes` speaks
NeMo-Gym's ``/verify``, OpenRLHF's ``/get_reward`` and jurist's ``/v1/reward``, :mod:`~jurist.serve.app`
guards and routes them, :mod:`~jurist.serve.clients` gives verl-style ``compute_score`` helpers.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from jurist import lazy_face

if TYPE_CHECKING:
    from jurist.serve.app import Bounds
    from jurist.serve.clients import HttpScorer, InProcessScorer, compute_score
    from jurist.serve.server import Listen, RewardServer, ThreadedServer, serve_forever
    from jurist.serve.service import RewardItem, RewardOutcome, RewardService, ServeSettings

_HOMES = {
    "Bounds": "app",
    "HttpScorer": "clients",
    "InProcessScorer": "clients",
    "compute_score": "clients",
    "Listen": "server",
    "RewardServer": "server",
    "ThreadedServer": "server",
    "serve_forever": "server",
    "RewardItem": "service",
    "RewardOutcome": "service",
    "RewardService": "service",
    "ServeSettings": "service",
}

__getattr__ = lazy_face(__name__, _HOMES)

__all__ = [
    "Bounds",
    "HttpScorer",
    "InProcessScorer",
    "Listen",
    "RewardItem",
    "RewardOutcome",
    "RewardServer",
    "RewardService",
    "ServeSettings",
    "ThreadedServer",
    "compute_score",
    "serve_forever",
]
