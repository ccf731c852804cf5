"""The rules family: IFEval and IFBench checks scored prompt- and instruction-level, strict and loose.

Used through :mod:`jurist.families` and its registry; nothing here is imported from outside the package.
"""
