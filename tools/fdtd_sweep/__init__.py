"""The fdtd_sweep tool: a 1-D FDTD parameter sweep on AWS Batch."""

from tools.fdtd_sweep.capability import FdtdSweep

__all__ = ["FdtdSweep"]
