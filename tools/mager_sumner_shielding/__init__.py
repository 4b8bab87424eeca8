"""mager_sumner_shielding: static magnetic shielding factor of concentric shells."""

from tools.mager_sumner_shielding.capability import MagerSumnerShieldingCapability

__all__ = ["MagerSumnerShieldingCapability"]
