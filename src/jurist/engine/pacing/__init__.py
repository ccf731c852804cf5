"""How fast requests go: the process's and each model's concurrency (:mod:`~jurist.engine.pacing.limits`),
retries with jitter honouring ``Retry-After`` (:mod:`~jurist.engine.pacing.retry`) and the cross-process
spacing of request starts (:mod:`~jurist.engine.pacing.throttle`).
"""
