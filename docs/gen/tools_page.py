"""The tools reference page: ``colony tools docs``' output, rendered from the catalog at build time."""

from __future__ import annotations

import mkdocs_gen_files

from colony.catalog import load_registry
from colony.docs import render_tools_reference

with mkdocs_gen_files.open("reference/tools.md", "w") as page:
    page.write(render_tools_reference(load_registry()))
