"""What a call of tinker-cookbook's API does, when the cookbook is not a module of the project:
its entry of ``facts/cookbook_api.py`` as the summary a project helper would have
(``summaries.Summary``), so that every rule judges ``await completer(messages)`` as it judges a
call of the project's own helper that samples and waits.

``helpers.py`` asks here only after the project: where the cookbook is the project (its own
checkout), the project's summary of its own code is the answer.
"""

from __future__ import annotations

from functools import cache

from tinker_lint.model.analyses.summaries import MethodRef, Summary, WaitSite
from tinker_lint.model.facts import cookbook_api
from tinker_lint.model.facts.cookbook_api import CookbookCallable
from tinker_lint.model.facts.sdk import Client


def function(qualified: str) -> Summary | None:
    entry = cookbook_api.function(qualified)
    return None if entry is None else summary(entry)


def method(qualified_class: str, name: str) -> Summary | None:
    entry = cookbook_api.method(qualified_class, name)
    return None if entry is None else summary(entry)


@cache
def summary(entry: CookbookCallable) -> Summary:
    def ref(request: tuple[Client, str] | None) -> MethodRef | None:
        return None if request is None else MethodRef(*request)

    def site(request: tuple[Client, str] | None) -> WaitSite | None:
        # Where it waits, for messages: the module (``WaitSite.where`` shows a dotted path as
        # it is), not a line of one release.
        return None if request is None else WaitSite(ref(request), entry.module, 0)

    return Summary(
        entry.name,
        entry.is_async,
        submits=entry.submits,
        submit=ref(entry.first_submit),
        waits=entry.waits,
        wait=site(entry.first_wait),
        last_wait=site(entry.last_wait or entry.first_wait),
        blocks=entry.blocks,
        waits_in_loop=entry.waits_in_loop,
        returns_clients=entry.returns_clients,
        refreshes_sampler=entry.refreshes_sampler,
    )
