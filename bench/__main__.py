"""Run every benchmark script: ``python -m bench``."""

import runpy

SCRIPTS = ["bench.hpc"]

if __name__ == "__main__":
    for script in SCRIPTS:
        print(f"== {script}")
        runpy.run_module(script, run_name="__main__")
