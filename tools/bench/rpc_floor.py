#!/usr/bin/env python3
# Licensed under the Apache License, Version 2.0 (the "License"); you may
# not use this file except in compliance with the License. You may obtain
# a copy of the License at
#
#      http://www.apache.org/licenses/LICENSE-2.0
#
# Unless required by applicable law or agreed to in writing, software
# distributed under the License is distributed on an "AS IS" BASIS, WITHOUT
# WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied. See the
# License for the specific language governing permissions and limitations
# under the License.
"""What one oslo.messaging RPC call costs, with nothing of Cyborg's in it.

    .venvs/cyborg/bin/python tools/bench/rpc_floor.py \\
        --rabbit rabbit://guest:guest@127.0.0.1:5672/bench [--calls 1000]

A server process (oslo.messaging's threading executor, its default
since eventlet went, as Cyborg's services run it) answers ``ping`` with
its argument; this process calls it ``--calls`` times, one call at a
time, first back to back, then with a pause between two calls as long
as the rest of a bind cycle's step leaves between two of Nova's calls
(``--gaps``, ms). It prints, per call,
the round trip and the CPU each process spent: the floor that every
write through the API (an HTTP request, then a call to the conductor)
pays before any of Cyborg's own work.
"""

import argparse
import os
import subprocess  # nosec B404
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.dirname(os.path.dirname(HERE)))

import compare_memory  # noqa: E402

from cyborg.common import process  # noqa: E402,I100

# As the services' entry points do, before the libraries load.
process.use_native_threads()

from oslo_config import cfg  # noqa: E402,I100
import oslo_messaging as messaging  # noqa: E402

TOPIC = 'cyborg-rpc-floor'


class Endpoint:

    def ping(self, context, value):
        return value


def _transport(url):
    # oslo.messaging reads some of its options from the global object.
    cfg.CONF([], project='cyborg-rpc-floor')
    return messaging.get_rpc_transport(cfg.CONF, url=url)


def serve(url):
    """Answer pings until stdin closes."""
    transport = _transport(url)
    server = messaging.get_rpc_server(
        transport, messaging.Target(topic=TOPIC, server='floor'),
        [Endpoint()])
    server.start()
    print('ready', flush=True)
    sys.stdin.read()
    server.stop()
    server.wait()
    transport.cleanup()


def measure(url, calls, gaps):
    """{gap ms: (round trip, caller CPU, server CPU)}, ms per call."""
    server = subprocess.Popen(  # nosec B603
        [sys.executable, __file__, '--rabbit', url, '--serve'],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        if server.stdout.readline().strip() != 'ready':
            raise SystemExit('the server did not start')
        transport = _transport(url)
        client = messaging.get_rpc_client(
            transport, messaging.Target(topic=TOPIC))
        for value in range(50):  # warm-up
            client.call({}, 'ping', value=value)
        figures = {}
        for gap in gaps:
            busy = 0.0
            mine = time.process_time()
            theirs = compare_memory.cpu_seconds(server.pid)
            for value in range(calls):
                start = time.perf_counter()
                client.call({}, 'ping', value=value)
                busy += time.perf_counter() - start
                time.sleep(gap / 1000)
            figures[gap] = tuple(1000 * figure / calls for figure in (
                busy, time.process_time() - mine,
                compare_memory.cpu_seconds(server.pid) - theirs))
        transport.cleanup()
        return figures
    finally:
        server.stdin.close()
        server.wait()


def main():
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('--rabbit', required=True,
                        help='RabbitMQ transport URL, its own virtual host')
    parser.add_argument('--calls', type=int, default=1000)
    parser.add_argument('--gaps', default='0,10',
                        help='pauses between two calls, ms, comma '
                        'separated (default 0,10)')
    parser.add_argument('--serve', action='store_true',
                        help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve:
        return serve(args.rabbit)
    gaps = [float(gap) for gap in args.gaps.split(',')]
    for gap, (trip, mine, theirs) in measure(args.rabbit, args.calls,
                                             gaps).items():
        print('pause %g ms: round trip %.2f ms; CPU per call: caller '
              '%.2f ms, server %.2f ms' % (gap, trip, mine, theirs))


if __name__ == '__main__':
    main()
