#!/usr/bin/env python3
"""chorus doctor on flight records written by hand (flight_records.py) for each way a job hangs:
a rank that left the loop early (in finalize), a rank that skipped one all-reduce, ranks calling
different collectives at one seq, a rank without a record (stopped, per launcher.json), two
communicators waiting on each other, a consistently late rank (--stragglers); and bad input
(exit 2, the file and field named). Every expected value is worked out from the scenario.

usage: test_doctor.py CHORUS
"""
import json
import os
import subprocess
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from flight_records import comm, dump, entry, launcher, launcher_rank, loop, ns, write  # noqa: E402

CHORUS = sys.argv.pop(1) if len(sys.argv) > 1 else "chorus"


def doctor(directory, *flags):
    return subprocess.run([CHORUS, "doctor", directory, *flags], capture_output=True, text=True, timeout=60)


class Doctor(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.dir = os.path.join(self.tmp.name, "dumps")

    def tearDown(self):
        self.tmp.cleanup()

    def both(self, *flags):
        """The text and the JSON diagnosis, both with exit status 0."""
        text = doctor(self.dir, *flags)
        self.assertEqual(text.returncode, 0, text.stderr)
        js = doctor(self.dir, "--json", *flags)
        self.assertEqual(js.returncode, 0, js.stderr)
        return text.stdout, json.loads(js.stdout)

    def test_rank_that_left_the_loop_early_is_in_finalize(self):
        # Rank 0 started its 10th all-reduce (seq 9) at 100.09 s and dumped at 112 s: 11.91 s of
        # waiting. Rank 1 did 9 and has been in finalize since 100.1 s.
        write(self.dir, [
            dump(0, 2, [comm("shm", [0, 1], 0, loop(9) + [entry(9, 100.09, state="started")])]),
            dump(1, 2, [comm("shm", [0, 1], 1, loop(9))], place="in_finalize", since=100.1, reason="finalize",
                 detail="waiting for rank(s) 0 to reach finalize"),
        ])
        text, j = self.both()
        self.assertIn("parted on communicator 'shm' (backend shm) at collective seq 9: all_reduce f32 x1009 "
                      "(algorithm shm)", text)
        self.assertNotIn("error of", text)  # a record written while waiting in finalize is no error
        self.assertIn("waiting in it:   rank 0 for 11.9 s", text)
        self.assertIn("never issued it: rank 1: in finalize for 11.9 s, after 9 collectives on 'shm'", text)
        self.assertEqual(j["verdict"], "parted")
        f = j["findings"][0]
        self.assertEqual((f["communicator"], f["backend"], f["seq"], f["op"]), ("shm", "shm", 9, "all_reduce"))
        self.assertEqual([w["rank"] for w in f["waiting"]], [0])
        self.assertAlmostEqual(f["waiting"][0]["waited_s"], 11.91, places=6)
        self.assertEqual([(a["rank"], a["where"], a["issued"]) for a in f["absent"]], [(1, "in_finalize", 9)])
        # Ten alike all-reduces and no step markers: rank 1 may as well have skipped one of them
        # earlier; the doctor says it cannot tell, and claims no skip.
        self.assertTrue(f["alike"])
        self.assertEqual(f["step_skips"], [])
        self.assertIn("every collective the records hold on 'shm' is the same call: a rank that skipped one "
                      "earlier cannot be told from one that left early", text)

    def test_rank_that_skipped_one_of_alike_calls_in_a_marked_step(self):
        # Steps 0-9 of one all-reduce each (step i starts at 100 + i/100 s), the program marking
        # each step's end. Rank 0 did steps 0-8 and waits in step 9's call (seq 9; 9 steps marked).
        # Rank 1 skipped step 4's call: its seq 0-3 are steps 0-3, its seq 4-8 steps 5-9; it marked
        # all ten steps and went to finalize. Steps both finished: 0-8. In step 4 rank 1 issued 0
        # where rank 0 issued 1, and its first collective from step 4 on is its seq 4.
        r0 = [entry(i, 100 + i / 100, step=i) for i in range(9)] + [entry(9, 100.09, state="started", step=9)]
        r1 = [entry(i, 100 + i / 100, step=i) for i in range(4)] + \
             [entry(i - 1, 100 + i / 100, step=i) for i in range(5, 10)]
        write(self.dir, [
            dump(0, 2, [comm("shm", [0, 1], 0, r0)], steps_marked=9),
            dump(1, 2, [comm("shm", [0, 1], 1, r1)], place="in_finalize", since=100.1, reason="finalize",
                 steps_marked=10),
        ])
        text, j = self.both()
        f = j["findings"][0]
        self.assertEqual((j["verdict"], f["seq"]), ("parted", 9))
        self.assertEqual(f["step_skips"], [{"rank": 1, "step": 4, "issued": 0, "others": 1, "from_seq": 4}])
        self.assertFalse(f["alike"])
        self.assertIn("rank 1 issued 0 collectives in step 4 where the others issued 1: it skipped one (at or after "
                      "its seq 4)", text)
        self.assertNotIn("cannot be told", text)

    def test_rank_that_left_a_marked_loop_early(self):
        # As above, but rank 1 did steps 0-8 whole (seq 0-8, 9 steps marked) and left: every step
        # both finished (0-8) holds one call on each rank, so no skip is claimed, nor the caveat.
        r0 = [entry(i, 100 + i / 100, step=i) for i in range(9)] + [entry(9, 100.09, state="started", step=9)]
        r1 = [entry(i, 100 + i / 100, step=i) for i in range(9)]
        write(self.dir, [
            dump(0, 2, [comm("shm", [0, 1], 0, r0)], steps_marked=9),
            dump(1, 2, [comm("shm", [0, 1], 1, r1)], place="in_finalize", since=100.1, steps_marked=9),
        ])
        text, j = self.both()
        f = j["findings"][0]
        self.assertEqual((j["verdict"], f["seq"], f["step_skips"], f["alike"]), ("parted", 9, [], False))
        self.assertNotIn("skipped", text)
        self.assertNotIn("cannot be told", text)

    def test_step_skip_ignores_a_step_the_ring_holds_in_part(self):
        # Rings that lost their oldest calls: rank 0 holds seq 6-9, rank 1 seq 5-8. Step 3 had two
        # calls (seq 5 and 6) on both ranks, and rank 0's ring lost seq 5. A ring's oldest step may
        # be held in part, so step 3 is not compared (it would look like a skip by rank 0); steps
        # 4 and 5, finished by both, hold one call each on both: no skip.
        r0 = [entry(6, 100.06, step=3), entry(7, 100.07, step=4), entry(8, 100.08, step=5),
              entry(9, 100.09, state="started", step=6)]
        r1 = [entry(5, 100.05, step=3), entry(6, 100.06, step=3), entry(7, 100.07, step=4),
              entry(8, 100.08, step=5)]
        write(self.dir, [
            dump(0, 2, [comm("shm", [0, 1], 0, r0)], steps_marked=6),
            dump(1, 2, [comm("shm", [0, 1], 1, r1)], place="in_finalize", since=100.1, steps_marked=6),
        ])
        _, j = self.both()
        self.assertEqual(j["findings"][0]["step_skips"], [])

    def test_rank_whose_wait_timed_out(self):
        # Rank 0's seq 9 started at 100.09 s and failed on its 5 s timeout; it dumped at 105.1 s.
        # Rank 1, in finalize since 100.1 s, dumped at 105.3 s when the launcher asked.
        detail = "all_reduce on shm: timed out after 5 s"
        write(self.dir, [
            dump(0, 2, [comm("shm", [0, 1], 0, loop(9) + [entry(9, 100.09, state="failed")])], dumped=105.1,
                 reason="timeout", detail=detail),
            dump(1, 2, [comm("shm", [0, 1], 1, loop(9))], place="in_finalize", since=100.1, dumped=105.3),
        ], launcher([launcher_rank(0, state="killed", signal=6), launcher_rank(1)], reason="rank_failure",
                    failed_rank=0))
        text, j = self.both()
        self.assertIn("launcher: stopped the job after rank 0 failed", text)
        self.assertIn("parted on communicator 'shm' (backend shm) at collective seq 9", text)
        self.assertIn("waiting in it:   rank 0 for 5.0 s, then failed", text)
        self.assertIn("never issued it: rank 1: in finalize for 5.2 s, after 9 collectives on 'shm'", text)
        self.assertIn("error of rank 0: " + detail, text)
        f = j["findings"][0]
        self.assertEqual((f["waiting"][0]["state"], f["seq"]), ("failed", 9))
        self.assertAlmostEqual(f["waiting"][0]["waited_s"], 5.01, places=6)

    def test_killed_rank_while_the_other_timed_out(self):
        # Rank 1 was killed (SIGKILL) before its seq 4: no record of its own. Rank 0's seq 4 started
        # at 100.04 s and failed on its 5 s timeout; it dumped at 105.1 s. Every record there
        # issued as many collectives (5), so the parting is the last one, in which rank 0 waited.
        write(self.dir, [
            dump(0, 2, [comm("gloo", [0, 1], 0, loop(4, algorithm="gloo") + [entry(4, 100.04, state="failed",
                                                                                 algorithm="gloo")])],
                 dumped=105.1, reason="timeout", detail="gloo all_reduce on rank 0: timed out"),
        ], launcher([launcher_rank(0, state="exited", exit_status=1, dumped=True),
                     launcher_rank(1, state="killed", signal=9, dumped=False)], reason="rank_failure", failed_rank=1))
        text, j = self.both()
        self.assertIn("parted on communicator 'gloo' (backend gloo) at collective seq 4", text)
        self.assertIn("waiting in it:   rank 0 for 5.1 s, then failed", text)
        self.assertIn("no record:       rank 1: no dump: killed by signal 9", text)
        f = j["findings"][0]
        self.assertEqual((j["verdict"], f["seq"], f["op"]), ("parted", 4, "all_reduce"))
        self.assertEqual([(w["rank"], w["state"]) for w in f["waiting"]], [(0, "failed")])
        self.assertEqual([(a["rank"], a["where"], a["state"], a["signal"]) for a in f["absent"]],
                         [(1, "no_dump", "killed", 9)])
        # The same without launcher.json (under mpirun): rank 1 is still named, as without a record.
        os.remove(os.path.join(self.dir, "launcher.json"))
        text, j = self.both()
        f = j["findings"][0]
        self.assertEqual((j["verdict"], f["seq"], [w["rank"] for w in f["waiting"]]), ("parted", 4, [0]))
        self.assertEqual([(a["rank"], a["where"], a["state"]) for a in f["absent"]], [(1, "no_dump", None)])

    def test_every_rank_failed_in_the_same_call_is_a_failure(self):
        # Both ranks' seq 2 failed (a lost connection) and both dumped: nobody left, a failure.
        write(self.dir, [
            dump(r, 2, [comm("gloo", [0, 1], r, loop(2, algorithm="gloo") + [entry(2, 100.02, state="failed",
                                                                                 algorithm="gloo")])],
                 reason="comm_error", detail=f"gloo all_reduce on rank {r}: connection closed")
            for r in (0, 1)])
        _, j = self.both()
        self.assertEqual((j["verdict"], j["findings"][0]["seq"]), ("failed", 2))

    def test_rank_killed_between_two_calls(self):
        # Rank 1 was killed right after seq 3; rank 0 had completed seq 3 too and had not issued
        # seq 4 when it wrote its record (asked by the launcher): nobody waits, but rank 1 is gone.
        # "No problem" would be untrue: the verdict is `missing`, after 4 collectives.
        write(self.dir, [dump(0, 2, [comm("shm", [0, 1], 0, loop(4))], dumped=100.2)],
              launcher([launcher_rank(0), launcher_rank(1, state="killed", signal=9, dumped=False)],
                       reason="rank_failure", failed_rank=1))
        text, j = self.both()
        self.assertIn("missing on communicator 'shm' (backend shm): the ranks with a record are in no call on it, "
                      "after 4 collectives", text)
        self.assertIn("no record:       rank 1: no dump: killed by signal 9", text)
        self.assertNotIn("no problem", text)
        f = j["findings"][0]
        self.assertEqual((j["verdict"], f["seq"], f["recorded"]), ("missing", None, 4))
        self.assertEqual([(a["rank"], a["where"], a["state"], a["signal"]) for a in f["absent"]],
                         [(1, "no_dump", "killed", 9)])

    def test_rank_that_arrived_after_the_other_gave_up(self):
        # Rank 1 was stopped before its seq 4 and continued (as mpirun continues a stopped rank
        # before ending it): rank 0 started seq 4 at 100.04 s, timed out and wrote its record at
        # 106.05 s; rank 1 started seq 4 at 106.5 s, found rank 0 gone and failed. Both failed at
        # seq 4, but rank 1 came 6.46 s after rank 0, after rank 0 had given up: the late one.
        write(self.dir, [
            dump(0, 2, [comm("gloo", [0, 1], 0, loop(4, algorithm="gloo") + [entry(4, 100.04, state="failed",
                                                                                 algorithm="gloo")])],
                 dumped=106.05, reason="timeout", detail="gloo all_reduce on rank 0: timed out"),
            dump(1, 2, [comm("gloo", [0, 1], 1, loop(4, algorithm="gloo") + [entry(4, 106.5, state="failed",
                                                                                 algorithm="gloo")])],
                 dumped=106.51, reason="comm_error", detail="gloo all_reduce on rank 1: rank 0 died"),
        ])
        text, j = self.both()
        self.assertIn("rank 1 started it 6.5 s after the first, when rank 0 had already given up on it: the others "
                      "waited for rank 1", text)
        f = j["findings"][0]
        self.assertEqual((j["verdict"], f["seq"], f["late"]["rank"], f["late"]["gave_up"]), ("failed", 4, 1, 0))
        self.assertAlmostEqual(f["late"]["after_s"], 6.46, places=6)
        # Had rank 1 started before rank 0 gave up (at 105 s), both simply failed: no late rank.
        write(self.dir, [
            dump(1, 2, [comm("gloo", [0, 1], 1, loop(4, algorithm="gloo") + [entry(4, 105.0, state="failed",
                                                                                 algorithm="gloo")])],
                 dumped=106.51, reason="comm_error", detail="gloo all_reduce on rank 1: rank 0 died"),
        ])
        _, j = self.both()
        self.assertIsNone(j["findings"][0]["late"])

    def test_rank_outside_chorus(self):
        write(self.dir, [
            dump(0, 2, [comm("gloo", [0, 1], 0, loop(4, algorithm="gloo") + [entry(4, 100.5, state="started",
                                                                                 algorithm="gloo", layer="torch")])]),
            dump(1, 2, [comm("gloo", [0, 1], 1, loop(4, algorithm="gloo"))]),
        ])
        text, j = self.both()
        self.assertIn("parted on communicator 'gloo' (backend gloo) at collective seq 4: all_reduce f32 x1009 "
                      "(algorithm gloo, from torch)", text)
        self.assertIn("never issued it: rank 1: outside chorus (no call in flight), after 4 collectives on 'gloo'", text)
        self.assertEqual(j["findings"][0]["absent"][0]["where"], "outside")

    def test_rank_that_skipped_one_all_reduce(self):
        # Buckets of 1000 + i elements issued asynchronously; rank 1 skipped bucket 4, so its
        # seq 4 is rank 0's seq 5 (1005 elements) and the counts differ at seq 4.
        def buckets(indices):
            return [entry(seq, 100 + seq * 0.01, count=1000 + i, algorithm="gloo", is_async=True,
                          state="completed" if seq < 4 else "started") for seq, i in enumerate(indices)]
        write(self.dir, [
            dump(0, 2, [comm("gloo", [0, 1], 0, buckets([0, 1, 2, 3, 4, 5, 6]))], reason="timeout"),
            dump(1, 2, [comm("gloo", [0, 1], 1, buckets([0, 1, 2, 3, 5, 6]))], reason="timeout"),
        ])
        text, j = self.both()
        self.assertIn("disagreement on communicator 'gloo' (backend gloo) at collective seq 4: the ranks called "
                      "different collectives (count differ)", text)
        self.assertIn("rank 0: all_reduce f32 x1004 (algorithm gloo) (started)", text)
        self.assertIn("rank 1: all_reduce f32 x1005 (algorithm gloo) (started)", text)
        self.assertIn("rank 1 skipped the all_reduce rank 0 issued at seq 4", text)
        f = j["findings"][0]
        self.assertEqual((j["verdict"], f["communicator"], f["seq"], f["op"]), ("disagreement", "gloo", 4, "all_reduce"))
        self.assertEqual(f["differs"], ["count"])
        self.assertEqual([(c["rank"], c["count"]) for c in f["calls"]], [(0, 1004), (1, 1005)])

    def test_different_collectives_at_one_seq(self):
        detail = "shm collective seq 3: rank 0 called all_reduce, rank 1 broadcast"
        write(self.dir, [
            dump(0, 2, [comm("shm", [0, 1], 0, loop(3) + [entry(3, 100.03, state="failed")])],
                 reason="disagreement", detail=detail),
            dump(1, 2, [comm("shm", [0, 1], 1, loop(3) + [entry(3, 100.03, op="broadcast", root=0, state="failed")])],
                 reason="disagreement", detail=detail),
        ])
        text, j = self.both()
        self.assertIn("disagreement on communicator 'shm' (backend shm) at collective seq 3: the ranks called "
                      "different collectives (op, root differ)", text)
        self.assertIn("rank 0: all_reduce f32 x1009 (algorithm shm) (failed)", text)
        self.assertIn("rank 1: broadcast f32 x1009 root 0 (algorithm shm) (failed)", text)
        self.assertIn("error of rank 1: " + detail, text)
        f = j["findings"][0]
        self.assertEqual((j["verdict"], f["seq"]), ("disagreement", 3))
        self.assertEqual([(c["rank"], c["op"]) for c in f["calls"]], [(0, "all_reduce"), (1, "broadcast")])
        self.assertEqual(f["skipped"], "")

    def test_rank_without_a_record_stopped_per_launcher(self):
        # Ranks 0 and 2 wait in seq 6 (started at 100.06 s, dumped at 112 s); rank 1 was stopped
        # (SIGSTOP) inside it: no record, its beacon says 7 started, 6 ended.
        waiting = loop(6) + [entry(6, 100.06, state="started")]
        beacon = {"place": "running", "since_ns": ns(100.0), "started": 7, "ended": 6}
        write(self.dir, [
            dump(0, 3, [comm("shm", [0, 1, 2], 0, waiting)]),
            dump(2, 3, [comm("shm", [0, 1, 2], 2, waiting)]),
        ], launcher([launcher_rank(0), launcher_rank(1, state="stopped", dumped=False, beacon=beacon),
                     launcher_rank(2)]))
        text, j = self.both()
        self.assertIn("launcher: stopped the job after a stall (no operation started or ended for 2 s)", text)
        self.assertIn("no flight record from rank 1", text)
        self.assertIn("parted on communicator 'shm' (backend shm) at collective seq 6: all_reduce", text)
        self.assertIn("waiting in it:   rank 0 for 11.9 s", text)
        self.assertIn("waiting in it:   rank 2 for 11.9 s", text)
        self.assertIn("no record:       rank 1: no dump: stopped (pid 4241 in state T", text)
        self.assertIn("its beacon: in a call (7 started, 6 ended)", text)
        f = j["findings"][0]
        self.assertEqual((j["verdict"], f["communicator"], f["seq"], f["op"]), ("parted", "shm", 6, "all_reduce"))
        self.assertEqual([w["rank"] for w in f["waiting"]], [0, 2])
        self.assertEqual([(a["rank"], a["where"]) for a in f["absent"]], [(1, "no_dump")])
        self.assertEqual(j["missing_ranks"], [1])
        self.assertEqual(j["launcher"]["reason"], "stall")

    def test_two_communicators_waiting_on_each_other(self):
        # Rank 0 waits in shm seq 9 (since 100.09 s); rank 1 waits in a gloo broadcast, seq 2
        # (since 100.5 s), which rank 0 never issued: two findings, the longer wait first.
        write(self.dir, [
            dump(0, 2, [comm("shm", [0, 1], 0, loop(9) + [entry(9, 100.09, state="started")]),
                        comm("gloo", [0, 1], 0, loop(2, algorithm="gloo"))]),
            dump(1, 2, [comm("shm", [0, 1], 1, loop(9)),
                        comm("gloo", [0, 1], 1, loop(2, algorithm="gloo") +
                             [entry(2, 100.5, op="broadcast", root=0, state="started", algorithm="gloo")])]),
        ])
        text, j = self.both()
        self.assertIn("[1/2] parted on communicator 'shm' (backend shm) at collective seq 9", text)
        self.assertIn("never issued it: rank 1: in broadcast f32 x1009 root 0 seq 2 on 'gloo' for 11.5 s, "
                      "after 9 collectives on 'shm'", text)
        self.assertIn("[2/2] parted on communicator 'gloo' (backend gloo) at collective seq 2: broadcast", text)
        self.assertIn("never issued it: rank 0: in all_reduce f32 x1009 seq 9 on 'shm' for 11.9 s, "
                      "after 2 collectives on 'gloo'", text)
        self.assertEqual([(f["communicator"], f["seq"]) for f in j["findings"]], [("shm", 9), ("gloo", 2)])
        self.assertEqual(j["findings"][0]["absent"][0]["communicator"], "gloo")

    def test_all_ranks_in_the_same_collective(self):
        # Both ranks issued seq 5 (at 100.5 s and 101 s) and neither completed it by 112 s.
        write(self.dir, [
            dump(r, 2, [comm("gloo", [0, 1], r, loop(5, algorithm="gloo") +
                             [entry(5, 100.5 + r * 0.5, state="started", algorithm="gloo")])]) for r in (0, 1)])
        text, j = self.both()
        self.assertIn("all waiting on communicator 'gloo' (backend gloo) in collective seq 5: all_reduce f32 x1009 "
                      "(algorithm gloo): every rank issued it, none has completed it", text)
        self.assertIn("waiting in it: rank 0 for 11.5 s", text)
        self.assertIn("waiting in it: rank 1 for 11.0 s", text)
        f = j["findings"][0]
        self.assertEqual((j["verdict"], f["seq"], f["absent"]), ("all_waiting", 5, []))

    def test_rank_waiting_for_a_peer(self):
        # Rank 0 has waited in a recv from rank 1 since 103 s; rank 1 has no call in flight.
        write(self.dir, [
            dump(0, 2, [comm("gloo", [0, 1], 0, loop(2, algorithm="gloo") +
                             [entry(None, 103.0, op="recv", peer=1, state="started", algorithm="gloo")])]),
            dump(1, 2, [comm("gloo", [0, 1], 1, loop(2, algorithm="gloo") +
                             [entry(None, 102.0, op="send", peer=0, algorithm="gloo")])]),
        ])
        text, j = self.both()
        self.assertIn("waiting for a peer on communicator 'gloo' (backend gloo): rank 0 in recv f32 x1009 from rank 1 "
                      "(algorithm gloo) for 9.0 s", text)
        self.assertIn("its peer: rank 1: outside chorus (no call in flight), after 2 collectives on 'gloo'", text)
        f = j["findings"][0]
        self.assertEqual((j["verdict"], f["seq"], f["waiting"][0]["peer"]), ("peer_wait", None, 1))

    def test_no_problem(self):
        write(self.dir, [dump(r, 2, [comm("shm", [0, 1], r, loop(10))]) for r in (0, 1)])
        text, j = self.both()
        self.assertIn("no problem found: all ranks completed the same 10 collectives on 'shm'", text)
        self.assertEqual((j["verdict"], j["findings"]), ("no_problem", []))
        self.assertEqual(j["completed"], [{"communicator": "shm", "collectives": 10}])
        self.assertEqual(j["warnings"], [])

    def test_dumps_of_two_jobs_are_named(self):
        write(self.dir, [dump(0, 2, [comm("shm", [0, 1], 0, loop(10))], job="l100"),
                         dump(1, 2, [comm("shm", [0, 1], 1, loop(10))], job="l200")])
        text, j = self.both()
        self.assertIn("warning: the dumps are of 2 different jobs: 'l100' (ranks 0), 'l200' (ranks 1)", text)
        self.assertEqual(len(j["warnings"]), 1)

    def test_consistently_late_rank(self):
        # Ten all-reduces, 0.1 s apart; rank 2 starts each 5 ms after rank 0 and 4 ms after rank 1,
        # except seq 0, where rank 0 starts 6 ms late. Rank 2: last at 9 of 10, costing the others
        # 9 x (5 + 4) = 81 ms; rank 0: last once, costing (6 - 1) + (6 - 5) = 6 ms.
        def starts(rank):
            offsets = {0: [6] + [0] * 9, 1: [1] * 10, 2: [5] * 10}[rank]
            return [entry(i, 100 + i * 0.1 + offsets[i] / 1000) for i in range(10)]
        write(self.dir, [dump(r, 3, [comm("shm", [0, 1, 2], r, starts(r))]) for r in range(3)])
        text, j = self.both("--stragglers")
        self.assertIn("no problem found: all ranks completed the same 10 collectives on 'shm'", text)
        self.assertIn("straggler: rank 2, last at 9 of 10 collectives; the others lost 81.00 ms waiting for it", text)
        s = j["stragglers"]
        self.assertEqual(s["stragglers"], [2])
        self.assertFalse(s["cross_host"])
        self.assertEqual({r["rank"]: r["last"] for r in s["ranks"]}, {0: 1, 1: 0, 2: 9})
        lost = {r["rank"]: r["others_lost_s"] for r in s["ranks"]}
        self.assertAlmostEqual(lost[2], 0.081, places=6)
        self.assertAlmostEqual(lost[0], 0.006, places=6)
        self.assertEqual(len(s["arrivals"]), 10)
        self.assertEqual((s["arrivals"][0]["last_rank"], s["arrivals"][1]["last_rank"]), (0, 2))
        self.assertAlmostEqual(s["arrivals"][0]["skew_s"], 0.005, places=6)

    def test_equal_starts_name_no_straggler(self):
        write(self.dir, [dump(r, 2, [comm("shm", [0, 1], r, loop(5))]) for r in (0, 1)])
        text, j = self.both("--stragglers")
        self.assertIn("no straggler", text)
        self.assertEqual(j["stragglers"]["stragglers"], [])
        self.assertEqual({a["last_rank"] for a in j["stragglers"]["arrivals"]}, {-1})
        self.assertEqual({r["rank"]: r["last"] for r in j["stragglers"]["ranks"]}, {0: 0, 1: 0})

    def test_stragglers_across_hosts_use_the_wall_clock(self):
        # Host b's monotonic clock reads 50 s less than host a's for the same instant (its wall
        # offset is 50 s more). Rank 1 starts each collective 3 ms after rank 0 in real time, so
        # its monotonic starts look 49.997 s earlier: only the wall clock names it.
        d0 = dump(0, 2, [comm("gloo", [0, 1], 0, loop(5, step=1.0, algorithm="gloo"))], host="a")
        d1 = dump(1, 2, [comm("gloo", [0, 1], 1, loop(5, t0=50.003, step=1.0, algorithm="gloo"))], host="b",
                  wall_offset=1_700_000_050.0, dumped=62.0)
        write(self.dir, [d0, d1])
        _, j = self.both("--stragglers")
        s = j["stragglers"]
        self.assertTrue(s["cross_host"])
        self.assertEqual(s["stragglers"], [1])
        self.assertTrue(all(abs(a["skew_s"] - 0.003) < 1e-6 for a in s["arrivals"]), s["arrivals"])


    def test_stragglers_across_hosts_use_the_dumps_clock_offsets(self):
        # Rank 1 (host b) starts each of five collectives, 1 s apart, 3 ms after rank 0 (host a) in
        # real time. Host b's monotonic clock reads 7 s ahead of host a's (its offset to rank 0's
        # clock: -7 s, error 20 us), and its wall clock 10 ms behind (its wall offset 7.010 s less
        # than a's): on the wall clock rank 1 seems to start 7 ms early, on rank 0's clock 3 ms
        # late. One host's clock, same starts, is the reference: rank 1 last at all five, 3 ms.
        def dumps(clocks):
            d0 = dump(0, 2, [comm("gloo", [0, 1], 0, loop(5, step=1.0, algorithm="gloo"))], host="a",
                      clock=(0.0, 0.0) if clocks else None)
            d1 = dump(1, 2, [comm("gloo", [0, 1], 1, loop(5, t0=107.003, step=1.0, algorithm="gloo"))], host="b",
                      wall_offset=1_700_000_000.0 - 7.010, dumped=119.0, since=107.0,
                      clock=(-7.0, 20e-6) if clocks else None)
            return [d0, d1]
        write(self.dir, [dump(0, 2, [comm("gloo", [0, 1], 0, loop(5, step=1.0, algorithm="gloo"))]),
                         dump(1, 2, [comm("gloo", [0, 1], 1, loop(5, t0=100.003, step=1.0, algorithm="gloo"))])])
        _, reference = self.both("--stragglers")
        write(self.dir, dumps(clocks=True))
        text, j = self.both("--stragglers")
        s, ref = j["stragglers"], reference["stragglers"]
        self.assertEqual(ref["stragglers"], [1])
        self.assertTrue(s["cross_host"])
        self.assertEqual(s["stragglers"], ref["stragglers"])
        self.assertEqual([(r["rank"], r["last"], r["compared"]) for r in s["ranks"]],
                         [(r["rank"], r["last"], r["compared"]) for r in ref["ranks"]])
        for got, want in zip(s["ranks"], ref["ranks"]):  # (equal up to the nanoseconds' rounding)
            self.assertAlmostEqual(got["others_lost_s"], want["others_lost_s"], places=6)
        self.assertAlmostEqual(s["ranks"][1]["others_lost_s"], 0.015, places=6)
        self.assertEqual([(a["seq"], a["last_rank"]) for a in s["arrivals"]], [(i, 1) for i in range(5)])
        self.assertTrue(all(abs(a["skew_s"] - 0.003) < 1e-6 for a in s["arrivals"]), s["arrivals"])
        self.assertIn("start times compared on rank 0's clock (2 hosts; each dump's offset estimated at init, "
                      "error at most 20.0 us)", text)
        # The same dumps without the offsets: the wall clock, said so, and its (wrong) verdict.
        write(self.dir, dumps(clocks=False))
        text, j = self.both("--stragglers")
        s = j["stragglers"]
        self.assertEqual([(a["seq"], a["last_rank"]) for a in s["arrivals"]], [(i, 0) for i in range(5)])
        self.assertTrue(all(abs(a["skew_s"] - 0.007) < 1e-6 for a in s["arrivals"]), s["arrivals"])
        self.assertIn("start times compared on the wall clock (2 hosts; the dumps carry no clock offset", text)
        # One dump without it: the wall clock too.
        d = dumps(clocks=True)
        del d[1]["clock_to_rank0_ns"], d[1]["clock_error_ns"]
        write(self.dir, d)
        self.assertEqual([a["last_rank"] for a in self.both("--stragglers")[1]["stragglers"]["arrivals"]], [0] * 5)


class BadInput(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.dir = self.tmp.name

    def tearDown(self):
        self.tmp.cleanup()

    def refused(self, *needles):
        r = doctor(self.dir)
        self.assertEqual(r.returncode, 2, r.stdout + r.stderr)
        for n in needles:
            self.assertIn(n, r.stderr)
        self.assertNotIn("internal error", r.stderr)
        return r

    def good(self):
        return [dump(r, 2, [comm("shm", [0, 1], r, loop(3))]) for r in (0, 1)]

    def test_no_records(self):
        with open(os.path.join(self.dir, "rank-0.json.tmp"), "w") as f:
            f.write("{")  # a temporary name is not a record
        self.refused(self.dir, "no flight records (rank-<R>.json)")

    def test_not_a_directory(self):
        self.dir = os.path.join(self.tmp.name, "absent")
        self.refused("absent", "not a directory")

    def test_truncated_json(self):
        write(self.dir, self.good())
        path = os.path.join(self.dir, "rank-1.json")
        with open(path) as f:
            text = f.read()
        with open(path, "w") as f:
            f.write(text[: len(text) // 2])
        self.refused(path, "not JSON")

    def test_missing_field(self):
        d = self.good()
        del d[1]["communicators"][0]["entries"][1]["state"]
        write(self.dir, d)
        self.refused("rank-1.json", "field 'communicators[0].entries[1].state': missing")

    def test_wrong_type_and_value(self):
        d = self.good()
        d[0]["communicators"][0]["entries"][2]["count"] = "many"
        write(self.dir, d)
        self.refused("rank-0.json", "field 'communicators[0].entries[2].count': expected an integer")
        d = self.good()
        d[0]["communicators"][0]["entries"][0]["op"] = "allreduce"
        write(self.dir, d)
        self.refused("rank-0.json", "field 'communicators[0].entries[0].op': 'allreduce' is none of")
        d = self.good()
        d[1]["format"] = "something-else"
        write(self.dir, d)
        self.refused("rank-1.json", "field 'format'")

    def test_rank_that_does_not_match_the_file_name(self):
        d = self.good()
        d[1]["rank"] = 0
        d[1]["communicators"][0]["rank"] = 0
        with open(os.path.join(self.dir, "rank-1.json"), "w") as f:
            json.dump(d[1], f)
        write(self.dir, d[:1])
        self.refused("rank-1.json", "field 'rank': 0 in a file named for rank 1")

    def test_clock_offset_without_its_error_bound(self):
        d = self.good()
        d[1]["clock_to_rank0_ns"] = 5
        write(self.dir, d)
        self.refused("rank-1.json", "field 'clock_error_ns': is missing")
        d[1]["clock_error_ns"] = -1
        write(self.dir, d)
        self.refused("rank-1.json", "field 'clock_error_ns': expected at least 0, got -1")

    def test_bad_launcher_record(self):
        write(self.dir, self.good(), launcher([launcher_rank(0, state="sleeping")]))
        self.refused("launcher.json", "field 'ranks[0].state'")


if __name__ == "__main__":
    unittest.main(verbosity=2)
