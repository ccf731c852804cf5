"""Rule-checked instruction following (IFEval, IFBench): a checker per instruction id, no judge."""
