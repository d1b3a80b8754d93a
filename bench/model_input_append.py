"""What a `ModelInput` built token by token costs (TNK203's `append_int` case, issue 15).

    python bench/model_input_append.py [--tokens 1000 2000] [--runs 7]

Needs the real `tinker` package (not a dependency of tinker-lint: install it in a throwaway venv).
For each length, builds a `ModelInput` from a prompt of 64 tokens plus N more tokens four ways,
and prints the median wall time of each, the number of chunks the result has, and the size of
its JSON body (what a request carries) with the time to make it:

- `append_int` in a loop (`mi = mi.append_int(t)`, the shape TNK203 reports): every call makes a
  new `ModelInput` whose chunk list is a copy of the old one plus a one-token chunk, validated by
  pydantic: quadratic in N, and one chunk per token;
- a list of one-token chunks, made into one `ModelInput`: linear, but one chunk per token too;
- one `append(EncodedTextChunk(tokens=...))` of all N tokens;
- `ModelInput.from_ints(prompt + tokens)`.

A benchmark, not a test: figures depend on the machine.
"""

from __future__ import annotations

import argparse
import functools
import statistics
import time
from collections.abc import Callable

import tinker
from tinker import types


def _by_token(prompt: tinker.ModelInput, tokens: list[int]) -> tinker.ModelInput:
    model_input = prompt
    for token in tokens:
        model_input = model_input.append_int(token)
    return model_input


def _chunk_per_token(prompt: tinker.ModelInput, tokens: list[int]) -> tinker.ModelInput:
    chunks = [*prompt.chunks, *(types.EncodedTextChunk(tokens=[t]) for t in tokens)]
    return tinker.ModelInput(chunks=chunks)


def _one_chunk(prompt: tinker.ModelInput, tokens: list[int]) -> tinker.ModelInput:
    return prompt.append(types.EncodedTextChunk(tokens=tokens))


def _from_ints(prompt: tinker.ModelInput, tokens: list[int]) -> tinker.ModelInput:
    return tinker.ModelInput.from_ints(prompt.to_ints() + tokens)


def _median_ms(build: Callable[[], object], runs: int) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        build()
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--tokens", type=int, nargs="+", default=[1000, 2000])
    parser.add_argument("--runs", type=int, default=7)
    args = parser.parse_args()
    version = getattr(tinker, "__version__", "?")
    print(f"tinker {version}; median of {args.runs} runs")
    prompt = tinker.ModelInput.from_ints(list(range(64)))
    ways = (
        ("append_int per token", _by_token),
        ("a chunk per token", _chunk_per_token),
        ("one chunk", _one_chunk),
        ("from_ints", _from_ints),
    )
    for n in args.tokens:
        tokens = [(7 * i) % 50_000 for i in range(n)]
        for label, way in ways:
            ms = _median_ms(functools.partial(way, prompt, tokens), args.runs)
            built = way(prompt, tokens)
            assert built.to_ints() == prompt.to_ints() + tokens
            body = len(built.model_dump_json())
            dump_ms = _median_ms(built.model_dump_json, args.runs)
            print(
                f"{n:>6} tokens  {label:<22} {ms:9.3f} ms  "
                f"{len(built.chunks):>5} chunks  {body:>7} bytes of JSON ({dump_ms:.3f} ms)"
            )


if __name__ == "__main__":
    main()
