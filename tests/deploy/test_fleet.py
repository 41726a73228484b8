"""Fleet test (issue #19): 3 replicas behind haproxy (deploy/haproxy/glassbox.cfg) under mixed load;
one replica is SIGTERMed (drains), another SIGKILLed, a fourth started that must get traffic only
once ready. Every request the balancer accepted is answered, except possibly those in flight on
the SIGKILLed replica (counted from haproxy's log; with the retry policy, replayed elsewhere)."""
import os
import signal
import tempfile
import time

import fleet
from fleet import SLOW, Haproxy, Load, Replica, free_port

GLASSBOX = os.environ["GLASSBOX_BIN"]


def wait_until(cond, timeout, what):
    deadline = time.time() + timeout * SLOW
    while time.time() < deadline:
        if cond():
            return
        time.sleep(0.05)
    raise AssertionError("timed out waiting for " + what)


def test_fleet_drain_kill_join_under_load():
    work = tempfile.mkdtemp(prefix="glassbox-fleet-")
    replicas, lb, load = [], None, None
    try:
        for k in range(3):
            replicas.append(Replica(GLASSBOX, "r%d" % k, extra=["--drain-timeout", str(int(60 * SLOW))]))
        for r in replicas:
            r.wait_ready()
        late_port = free_port()  # the fourth replica's slot: DOWN until it is started and ready
        lb = Haproxy(work, [(r.name, r.port) for r in replicas] + [("r3", late_port)])
        lb.wait_up(["r0", "r1", "r2"])
        # haproxy starts every server UP; the empty slot turns DOWN after `fall` failed checks.
        wait_until(lambda: lb.stats()["r3"]["status"].startswith("DOWN"), 10, "the empty slot DOWN")

        load = Load(lb.port, clients=4, seconds=80 * SLOW, max_requests=20000)
        load_started, events = load.started, {}
        drained, killed = replicas[0], replicas[1]
        wait_until(lambda: all(r.infer_count() > 0 for r in replicas), 30, "traffic on every replica")

        events["sigterm"] = time.time()
        drained.proc.send_signal(signal.SIGTERM)  # readiness 503 at once, in-flight requests finish
        assert drained.proc.wait(90 * SLOW) == 0, drained.log

        wait_until(lambda: killed.infer_count() > 0, 10, "traffic on the replica about to be killed")
        in_flight_at_kill = int(lb.stats()["r1"]["scur"])
        events["sigkill"] = time.time()
        killed.proc.send_signal(signal.SIGKILL)
        killed.proc.wait(30)

        events["r3 start"] = time.time()
        late = Replica(GLASSBOX, "r3", port=late_port)
        replicas.append(late)
        # Until /v2/health/ready first answers 200, no inference may have reached it.
        before_ready = None
        deadline = time.time() + 90 * SLOW
        while time.time() < deadline:
            count = late.infer_count()
            if late.ready():
                before_ready = count
                break
            time.sleep(0.02)
        assert before_ready == 0, "the new replica answered %s inferences before it was ready" % before_ready
        lb.wait_up(["r3"], timeout=30)
        wait_until(lambda: late.infer_count() >= 5, 30, "traffic on the new replica once ready")
        time.sleep(1)
        results = load.stop()
        load = None
        final = lb.stats()
    finally:
        if load is not None:
            load.stop()
        if lb:
            lb.stop()
        for r in replicas:
            r.kill()

    assert len(results) > 50, "too little traffic to judge: %d requests" % len(results)
    log = {rec["rid"]: rec for rec in lb.log_records()}
    failed = [r for r in results if not r["ok"]]
    retried = [rec for rec in log.values() if rec["retries"] not in ("0", "")]
    print("fleet: %d requests, %d failed, %d retried by haproxy (%s), %d in flight on r1 at SIGKILL"
          % (len(results), len(failed), len(retried), sorted({rec["retries"] for rec in retried}), in_flight_at_kill))
    # Every request the client saw fail was in haproxy's log on the SIGKILLed replica, and there were
    # at most as many as it had in flight (retries replay them elsewhere: usually none fail).
    events["load"] = load_started
    for r in failed:
        print("fleet: failed", r, log.get(r["rid"]), "at +%.2f s; events (s after load start):" % (r["t0"] - load_started),
              {k: round(v - load_started, 2) for k, v in events.items()})
    # A request haproxy has no record of was never accepted by the balancer: the client sent it on an
    # idle keep-alive connection that was being closed (the keep-alive race every HTTP/1.1 client
    # meets; http.client reports RemoteDisconnected). Such requests are counted and bounded, not
    # passed off as answered; everything the balancer accepted and lost must be on the SIGKILLed replica.
    not_accepted = [r for r in failed if r["rid"] not in log]
    for r in not_accepted:
        assert r["reused"] and r["status"] is None and "RemoteDisconnected" in (r["error"] or ""), r
    assert len(not_accepted) <= 2, not_accepted
    lost = [r for r in failed if r["rid"] in log]
    for r in lost:
        assert log[r["rid"]]["srv"] == "r1", (r, log[r["rid"]])
    assert len(lost) <= in_flight_at_kill, (lost, in_flight_at_kill)
    counters = {n: {k: final[n][k] for k in ("stot", "hrsp_2xx", "hrsp_5xx", "eresp", "srv_abrt", "wretr", "wredis")}
                for n in ("r0", "r1", "r2", "r3")}
    print("fleet: haproxy per-replica counters", counters)
    # The drained replica answered everything it accepted: it exited 0 (glassbox exits 0 only once
    # no accepted request is in flight; exit 1 at the drain timeout), no client request failed, and
    # every request whose final replica it was got 200. haproxy's eresp on it may be 1-2: a request
    # sent on an idle keep-alive connection the draining server had just closed, never accepted by
    # glassbox, replayed elsewhere by retry-on empty-response (wretr/wredis).
    # The same race on the server side (haproxy sends on a keep-alive connection the draining server
    # is closing) shows as eresp or srv_abrt 1-2 on r0; what matters is that no accepted request was
    # dropped, which the log checks below show: every request whose final replica was r0 got 200.
    assert int(final["r0"]["srv_abrt"] or 0) <= 2, counters["r0"]
    on_r0 = [rec for rec in log.values() if rec["srv"] == "r0"]
    assert on_r0 and all(rec["status"] == "200" for rec in on_r0), [rec for rec in on_r0 if rec["status"] != "200"]
    assert all(r["ok"] for r in results if log.get(r["rid"], {}).get("srv") in ("r0", "r2", "r3"))


def test_throughput_helper_reports_answered_requests():
    """The figure in docs/benchmarks.md comes from fleet.throughput: it must count answers, not sends."""
    out = fleet.throughput(GLASSBOX, 1, seconds=3, clients=2)
    assert out["replicas"] == 1 and out["ok"] > 0 and out["failed"] == 0 and out["requests"] == out["ok"]
    assert abs(out["requests_per_s"] - out["ok"] / out["seconds"]) <= 0.02 * out["requests_per_s"] + 0.1, out
