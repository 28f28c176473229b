"""The searches' gate (`kelime.service.gate.Gate`): quick work skips the thread hop only when
nothing else runs or waits, and keeps every promise of the gate (one piece of work at a
time, a bounded queue, refusals at once). The slow lane's promises are tested with the
routes, in tests/test_service_anagram.py."""

from __future__ import annotations

import threading

import anyio
import pytest

from kelime.service.errors import Unavailable
from kelime.service.gate import Gate
from tests.waiting import until


def gate(**options) -> Gate:
    return Gate("questions", **{"threads": 1, "most_waiting": 4, "most_wait": 30,
                                "guess": 0.001, **options})


def test_quick_work_runs_on_the_event_loop_when_the_gate_is_idle():
    async def main():
        here, searches = threading.get_ident(), gate()
        ran_on = await searches.run(threading.get_ident, quick=True)
        assert ran_on == here
        assert await searches.run(threading.get_ident) != here  # the slow lane: a thread
        assert searches.turns.borrowed_tokens == 0 and searches.waiting == 0

    anyio.run(main)


def test_quick_work_waits_its_turn_in_a_thread_while_another_search_runs():
    release, log = threading.Event(), []

    def slow():
        log.append(("slow", "start"))
        release.wait(10)
        log.append(("slow", "end"))

    def quick():
        log.append(("quick", threading.get_ident()))

    async def main():
        here, searches = threading.get_ident(), gate()
        async with anyio.create_task_group() as tg:
            tg.start_soon(searches.run, slow)
            await until(lambda: log, "the slow search running in the gate's thread")
            tg.start_soon(lambda: searches.run(quick, quick=True))
            await anyio.wait_all_tasks_blocked()  # as far as it can go: run, or queued
            assert log == [("slow", "start")] and searches.waiting == 1  # waiting its turn
            release.set()
        assert log[:2] == [("slow", "start"), ("slow", "end")]
        assert log[2][0] == "quick" and log[2][1] != here  # after it, on the gate's thread

    anyio.run(main)


def test_a_full_gate_refuses_quick_work_too():
    async def main():
        full = gate(most_waiting=0)
        with pytest.raises(Unavailable) as refused:
            await full.run(lambda: "never", quick=True)
        assert refused.value.code == "busy" and refused.value.status == 503

    anyio.run(main)


def test_quick_work_that_fails_gives_its_turn_back():
    async def main():
        searches = gate()
        with pytest.raises(ZeroDivisionError):
            await searches.run(lambda: 1 / 0, quick=True)
        assert searches.turns.borrowed_tokens == 0
        assert await searches.run(lambda: "next", quick=True) == "next"

    anyio.run(main)


def test_now_takes_a_free_turn_at_once_or_does_nothing():
    """`Gate.now` runs work on the loop in a turn taken without waiting, and refuses (doing
    nothing) while a turn is held, someone waits, or `run` would answer busy."""
    async def main():
        searches, ran = gate(guess=1.0), []
        assert searches.now(lambda: threading.get_ident()) == threading.get_ident()
        assert searches.recent < 1.0  # timed like the rest
        held = object()
        searches.turns.acquire_on_behalf_of_nowait(held)
        with pytest.raises(anyio.WouldBlock):
            searches.now(lambda: ran.append(1))
        searches.turns.release_on_behalf_of(held)
        searches.waiting = 1
        with pytest.raises(anyio.WouldBlock):
            searches.now(lambda: ran.append(1))
        searches.waiting, searches.most_waiting = 0, 0  # run() would say busy
        with pytest.raises(anyio.WouldBlock):
            searches.now(lambda: ran.append(1))
        assert ran == [] and searches.turns.borrowed_tokens == 0

    anyio.run(main)
