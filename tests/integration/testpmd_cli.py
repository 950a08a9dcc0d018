# SPDX-License-Identifier: BSD-3-Clause
"""Driving dpdk-testpmd and reading what it prints: commands typed at its prompt (each waits,
bounded, for its answer), its statistics blocks (interactive, periodic and final), its xstats, the
mbufs of its pool outside the pool. Every wait here is a Program.wait_for with its deadline."""

import json
import re
import subprocess

from harness import expect, repeat_until

# testpmd drains the RX queues after printing "<mode> packet forwarding - ports=..." and before this
# line: frames must be sent only once it has appeared (and its statistics' baseline follows it:
# start_forwarding waits for both).
FORWARDING_STARTED = r"packet forwarding packets/burst="

def start_forwarding(p):
    """`start` in an interactive testpmd, until its forward statistics count every frame received
    from now on. testpmd prints the forwarding configuration ("<mode> packet forwarding - ports"),
    drains the RX queues, prints FORWARDING_STARTED, takes the statistics' baseline and launches
    the lcores, all before it reads the next command: a frame that arrives before the baseline is
    drained or counted in it, and missing from the forward statistics. The answer to a second
    command marks the end."""
    command(p, "start", FORWARDING_STARTED)
    command(p, "show port summary all", r"^Number of available ports")


def command(p, line, done=r"^Done", timeout=30.0):
    """Types `line` into an interactive testpmd and waits for the line matching `done` in its
    answer (None: none); returns the answer's lines. The answer starts after testpmd's echo of the command: a
    `done` line that an earlier command (or the start) printed but the harness had not yet read,
    as on a slow machine, is not taken for it."""
    mark = len(p.lines)
    p.send(line)
    # The echo follows the prompt, or stands alone when an event's log line came after the prompt.
    p.wait_for(r"^(?:testpmd> )?" + re.escape(line) + r"\s*$", timeout=timeout, start=mark)
    echo = p.last_index
    if done is None:  # a command with no answer (port config ...): its echo is all there is
        return []
    p.wait_for(done, timeout=timeout, start=echo + 1)
    return p.lines[echo + 1:p.last_index + 1]


def show(p, line, last):
    """Types `line` and waits for the line matching `last`; returns the output from the command on
    (that line included)."""
    mark = len(p.lines)
    p.send(line)
    p.wait_for(last, start=mark)
    return "\n".join(p.lines[mark:p.last_index + 1])


def run(p, line):
    """Sends `line`, then a command whose answer marks the end of its output; returns the output."""
    mark = len(p.lines)
    p.send(line)
    p.send("show port summary all")
    p.wait_for(r"^Number of available ports", start=mark)
    return "\n".join(p.lines[mark:p.last_index])


def parse_port_stats(text):
    """Parses the last 'NIC statistics' block of every port (show port stats / --stats-period)."""
    stats = {}
    blocks = re.split(r"#+ NIC statistics for port (\d+)\s+#+", text)
    for i in range(1, len(blocks) - 1, 2):
        port, body = int(blocks[i]), blocks[i + 1]
        values = {}
        for key in ("RX-packets", "RX-missed", "RX-bytes", "RX-errors", "RX-nombuf", "TX-packets",
                    "TX-errors", "TX-bytes"):
            m = re.search(re.escape(key) + r":\s+(\d+)", body)
            if m:
                values[key] = int(m.group(1))
        stats[port] = values
    return stats


def show_port_stats(p, last_port=1):
    """Runs `show port stats all` in an interactive testpmd and returns the parsed blocks."""
    mark = len(p.lines)
    p.send("show port stats all")
    p.wait_for(r"NIC statistics for port %d" % last_port, start=mark)
    p.wait_for(r"Tx-pps:", start=p.last_index)
    p.wait_for(r"^\s*#{20,}\s*$", start=p.last_index)
    return parse_port_stats("\n".join(p.lines[mark:p.last_index + 1]))


def parse_forward_stats(text):
    """Parses the final 'Forward statistics for port N' blocks printed when forwarding stops."""
    stats = {}
    for m in re.finditer(r"-+ Forward statistics for port (\d+)\s+-+\n(.*?)\n\s+-{20,}", text,
                         re.S):
        values = {k: int(v) for k, v in re.findall(r"([A-Za-z-]+):\s+(\d+)", m.group(2))}
        stats[int(m.group(1))] = values
    return stats


def receiver_rx_packets(p, start):
    """RX-packets of the first periodic NIC statistics block printed from line `start` on, and the
    line after it."""
    p.wait_for(r"NIC statistics for port 0", timeout=30, start=start)
    m = p.wait_for(r"RX-packets:\s+(\d+)", timeout=30, start=p.last_index)
    return int(m.group(1)), p.last_index + 1


class ReceiverCounts:
    """Port 0's RX-packets in a receiving testpmd's periodic stats blocks (--stats-period), read in
    the order it printed them: each step of a wait is one block."""

    def __init__(self, p):
        self.p = p
        self.blocks = [(0, 0)]  # (RX-packets, the line after its block)
        self.skip_to = 0  # the next block is read from this line on, at the earliest

    def next(self):
        self.blocks.append(receiver_rx_packets(self.p, max(self.blocks[-1][1], self.skip_to)))
        return self.blocks[-1][0]

    def wait_for(self, count, timeout=120.0):
        """Until a block shows at least `count` packets."""
        return repeat_until(self.next, lambda rx: rx >= count,
                            f"the receiver to count {count} packets", timeout=timeout)

    def wait_for_all(self, sent, timeout=120.0):
        """Until a block shows `sent` packets (every frame the sender's driver took), or three
        blocks in a row show the same count (the receiver stopped counting short of it for two
        stats periods). Only blocks printed from now on count: two equal blocks from a moment the
        receiver was not scheduled while the sender still sent do not end the wait."""
        self.p.drain()
        self.skip_to = len(self.p.lines)
        first = len(self.blocks)
        repeat_until(lambda: self._last_three(first),
                     lambda last: last[-1] == sent or (len(last) == 3 and len(set(last)) == 1),
                     f"the receiver to count {sent} packets or stop counting", timeout=timeout)

    def _last_three(self, first):
        self.next()
        return [rx for rx, _ in self.blocks[max(first, len(self.blocks) - 3):]]

    def counts(self):
        return [rx for rx, _ in self.blocks[1:]]


def xstats(p, port=0):
    """`show port xstats <port>` of an interactive testpmd: {name: value}. The list has no end
    line: `show port summary all`, typed after it, marks its end."""
    mark = len(p.lines)
    p.send(f"show port xstats {port}")
    p.send("show port summary all")  # xstats end with the prompt: this line marks their end
    p.wait_for(r"^#+ NIC extended statistics for port %d" % port, start=mark)
    p.wait_for(r"^Number of available ports", start=p.last_index + 1)
    text = "\n".join(p.lines[mark:p.last_index])
    return {k: int(v) for k, v in re.findall(r"^\s*(\w+):\s+(\d+)\s*$", text, re.M)}


def in_use(p):
    """mbufs of testpmd's pool held outside it: size - (per-lcore caches + common pool), from
    rte_mempool_dump."""
    mark = len(p.lines)
    p.send("dump_mempool")
    # (DPDK 25.11's testpmd spells it "dump mempool")
    if p.wait_for(r"mempool <mb_pool_0>|Command not found", start=mark).group(0) != "mempool <mb_pool_0>":
        mark = len(p.lines)
        p.send("dump mempool")
        p.wait_for(r"mempool <mb_pool_0>", start=mark)
    start = p.last_index
    size = int(p.wait_for(r"^\s*size=(\d+)", start=start).group(1))
    common = int(p.wait_for(r"common_pool_count=(\d+)", start=start).group(1))
    # Per-lcore caches are listed before the common pool (not at all without caches).
    caches = re.findall(r"total_cache_count=(\d+)", "\n".join(p.lines[start:p.last_index]))
    return size - common - sum(int(c) for c in caches)


def telemetry(prefix, request):
    """One request to the telemetry socket of the DPDK instance `prefix` (dpdk-telemetry.py):
    the value of the reply's key."""
    out = subprocess.run(["dpdk-telemetry.py", "-f", prefix], input=request + "\n",
                         capture_output=True, text=True, timeout=60)
    expect(out.returncode == 0, f"dpdk-telemetry.py {request}: {out.stdout}{out.stderr}")
    key = request.split(",")[0]
    replies = [json.loads(line) for line in out.stdout.splitlines() if line.startswith("{")]
    found = [r[key] for r in replies if key in r]
    expect(found, f"dpdk-telemetry.py {request}: no reply: {out.stdout}")
    return found[-1]


def mbufs_in_use(prefix):
    """in_use() through telemetry, for the testpmd of DPDK instance `prefix` whatever its prompt
    is doing: mbufs of mb_pool_0 held outside it."""
    info = telemetry(prefix, "/mempool/info,mb_pool_0")
    return info["size"] - info["common_pool_count"] - info["total_cache_count"]
