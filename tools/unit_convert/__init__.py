"""unit_convert: length, temperature and mass conversions."""

from tools.unit_convert.capability import UnitConvert

__all__ = ["UnitConvert"]
