"""A tool module that raises while it is imported: the catalog entry naming it must fail alone."""

from tests.colony.surfaces.broken_tools import IMPORT_FAILURE

raise RuntimeError(IMPORT_FAILURE)
