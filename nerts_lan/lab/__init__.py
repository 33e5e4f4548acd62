"""The lab: simulators, benchmarks, network labs and fault generators (only the cli imports it)."""
