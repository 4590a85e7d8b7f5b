"""Reports on a stored study: compute plain values first, then render them.

``ensembo report STORAGE`` writes a markdown summary, per-trial tables (markdown and
CSV) and, when matplotlib is installed, PNG plots. The modules are imported by what
needs them, so this package stays cheap to import (the progress bar uses
:mod:`ensembo.report.scoring`).
"""
