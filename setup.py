"""Package discovery for the three source roots mapped into one ``ensembo`` namespace.

pyproject.toml holds all metadata; this file only lists the subpackages, because
setuptools' automatic discovery cannot follow a package-dir mapping with several roots.
"""

from setuptools import find_packages, setup

ROOTS = {"ensembo": "core", "ensembo.plugins": "plugins", "ensembo.spaces": "spaces"}

packages = []
for package, folder in ROOTS.items():
    packages.append(package)
    packages.extend(f"{package}.{sub}" for sub in find_packages(folder))

# Folders of data files only (no __init__.py) are packages too, so that setuptools ships
# them without warning that it sees an importable package it was not told about.
packages.append("ensembo.spaces.library")

setup(packages=packages, package_dir=ROOTS)
