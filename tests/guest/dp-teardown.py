#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Guest helper of scenario 73-dp-teardown: a user-space process whose traffic runs
while the provider goes away under it (rmmod, unbind, a device fatal error).

  dp-teardown.py IBDEV SECS   a pair of RC QPs connected to each other through the
                              port's LID (pyverbs: libibverbs + libmlx5, the pair of
                              tests/guest/dp-faults.py) exchanges SENDs in a loop, one
                              at a time, each receive's bytes checked, with the
                              context's async events read between polls. Prints
                              "ready" after 20 good round trips, "progress N" every
                              200, then what ends the loop:
                                "event N"           an async event (N: enum
                                                    ibv_event_type, 8 = DEVICE_FATAL)
                                "wc-error S V"      a completion with status S (vendor V)
                                "post-error ..."    a post the library refused
                                "stalled"           no completion for 10 s
                                "timeout"           SECS passed with traffic running
                              The loop ends at DEVICE_FATAL, or at the first error or
                              stall; what comes in the 3 s after is printed too (the
                              events, completions and their statuses). Last, the
                              objects are closed ("close: ok" or "close: <error>")
                              and "ended reason=<why> rounds=<N>" is printed.

The scenario decides what the outcome must be (upstream mlx5_ib's, its run first).
"""
import importlib.util
import os
import select
import sys
import time

import pyverbs.enums as e
from pyverbs.device import Context
from pyverbs.pd import PD
from pyverbs.pyverbs_error import PyverbsError

_here = os.path.dirname(os.path.abspath(__file__))
_spec = importlib.util.spec_from_file_location("dpf", os.path.join(_here, "dp-faults.py"))
dpf = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(dpf)


def out(line):
    print(line, flush=True)


def read_events(ctx, fd, wait):
    """The async events pending on fd (waiting up to `wait` s for the first), acked."""
    got = []
    while fd is not None:
        r, _, _ = select.select([fd], [], [], wait)
        if not r:
            return got
        try:
            ev = ctx.get_async_event()
        except PyverbsError as ex:
            out("event-read-error %s" % ex)
            return got
        got.append(ev.event_type)
        out("event %d" % ev.event_type)
        ev.ack()
        wait = 0
    return got


def wait_wc(ctx, fd, cq, secs, evs):
    """The next completion of cq within secs, or None; async events are read between
    polls (appended to evs): a DEVICE_FATAL ends the wait with None."""
    end = time.time() + secs
    while True:
        n, wcs = cq.poll(1)
        if n:
            return wcs[0]
        evs.extend(read_events(ctx, fd, 0.005))
        if e.IBV_EVENT_DEVICE_FATAL in evs or time.time() >= end:
            return None


def main():
    ctx = Context(name=sys.argv[1])
    secs = float(sys.argv[2])
    pd = PD(ctx)
    lid = ctx.query_port(1).lid
    fd = dpf.async_fd()
    a, b = dpf.pair(ctx, pd, lid)
    evs, rounds, reason = [], 0, "timeout"
    end = time.time() + secs
    while time.time() < end:
        byte = rounds % 251
        try:
            b.recv()
            a.send(byte)
        except PyverbsError as ex:
            out("post-error %s" % ex)
            reason = "post-error"
            break
        wa = wait_wc(ctx, fd, a.scq, 10, evs)
        wb = wait_wc(ctx, fd, b.rcq, 10, evs) if wa is not None else None
        if e.IBV_EVENT_DEVICE_FATAL in evs:
            reason = "device-fatal"
            break
        if wa is None or wb is None:
            out("stalled")
            reason = "stalled"
            break
        bad = [w for w in (wa, wb) if w.status != e.IBV_WC_SUCCESS]
        if bad:
            out("wc-error %d %#x" % (bad[0].status, bad[0].vendor_err))
            reason = "wc-error"
            break
        got = b.mr.read(dpf.MSG, 0)
        if got != bytes([byte]) * dpf.MSG:
            out("data-error round %d: %r" % (rounds, got[:8]))
            reason = "data-error"
            break
        rounds += 1
        if rounds == 20:
            out("ready")
        elif rounds % 200 == 0:
            out("progress %d" % rounds)
    # What comes after: events and completions, statuses only.
    after = time.time() + 3
    while time.time() < after:
        read_events(ctx, fd, 0.05)
        for name, cq in (("send", a.scq), ("recv", a.rcq), ("send", b.scq), ("recv", b.rcq)):
            try:
                n, wcs = cq.poll(1)
            except PyverbsError as ex:
                out("poll-error %s" % ex)
                n = 0
            if n:
                out("after %s completion status %d" % (name, wcs[0].status))
    try:
        a.close()
        b.close()
        pd.close()
        ctx.close()
        out("close: ok")
    except PyverbsError as ex:
        out("close: %s" % ex)
    out("ended reason=%s rounds=%d" % (reason, rounds))
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except PyverbsError as ex:
        out("ended reason=helper-error (%s)" % ex)
        sys.exit(1)
