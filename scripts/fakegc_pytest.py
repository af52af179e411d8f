"""pytest plugin: `python3 -m pytest -p fakegc_pytest --fakegc` (the hooks
are fakegc.pytest_plugin's)."""
from fakegc.pytest_plugin import (Judge, pytest_addoption,  # noqa: F401
                                  pytest_configure)
