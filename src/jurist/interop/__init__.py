"""Other harnesses' files (Arena-Hard-Auto, AlpacaEval, ...) read into and written from jurist runs."""
