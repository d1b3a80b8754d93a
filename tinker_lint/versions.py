"""The tinker releases tinker-lint knows by number: below every layer, since settings (the default
target), the SDK tables and ``doctor`` all read them."""

from __future__ import annotations

from packaging.version import Version

NEWEST_KNOWN_TINKER = Version("0.38.0")
# The release in which the plain methods started returning awaitable futures and every ``*_async``
# form became deprecated (FutureWarning), and client factories started returning futures.
ASYNC_DEPRECATION_VERSION = Version("0.38.0")
